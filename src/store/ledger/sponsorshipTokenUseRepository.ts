import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { createSqliteTokenSpend } from './sqliteTokenSpend.js';
import { spendTokenUse } from './tokenUseRows.js';

/**
 * Spent sponsorship-token ids (table sponsorship_token_uses, migration 0017): the SQL side of
 * sponsorshipTokens/replayStore.ts's `JtiReplayStore`, which it satisfies structurally (the store does not import
 * the domain). One statement per spend, so it is exact under concurrency on both back ends: the insert meets the
 * primary key, and only a row already expired is taken over.
 */
export interface SponsorshipTokenUseRepository {
  spend(args: { dappId: string; jti: string; expiresAt: number; nowSeconds: number }): Promise<boolean>;
  sweep(nowSeconds: number): Promise<number>;
}

export function createSponsorshipTokenUseRepository(
  db: Kysely<Database>,
  sqlite?: BetterSqlite3.Database,
): SponsorshipTokenUseRepository {
  // SQLite: grouped per loop turn with a prepared statement (sqliteTokenSpend.ts); Kysely where it hands one back.
  const spendSync = sqlite === undefined ? undefined : createSqliteTokenSpend(sqlite);
  return {
    async spend(args) {
      const grouped = await spendSync?.(args);
      if (grouped !== undefined) return grouped;
      return spendTokenUse(db, args);
    },
    async sweep(nowSeconds) {
      const result = await db
        .deleteFrom('sponsorship_token_uses')
        .where('expires_at', '<', nowSeconds)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

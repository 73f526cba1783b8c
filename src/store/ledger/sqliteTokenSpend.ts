import type BetterSqlite3 from 'better-sqlite3';
import { sqlitePerTurn } from '../db/sqlitePerTurn.js';

/** One jti to spend: the same arguments as SponsorshipTokenUseRepository.spend. */
export interface TokenSpend {
  readonly dappId: string;
  readonly jti: string;
  readonly expiresAt: number;
  readonly nowSeconds: number;
}

/** true: spent now; false: already spent (replayed); undefined: not decided here, the caller goes through Kysely. */
export type SqliteTokenSpend = (spend: TokenSpend) => Promise<boolean | undefined>;

/** A jti spent (dapp_id, jti, expires_at, now): one change when spent now, none when already spent. */
export const SQLITE_TOKEN_SPEND = `INSERT INTO sponsorship_token_uses (dapp_id, jti, expires_at) VALUES (?, ?, ?)
  ON CONFLICT (dapp_id, jti) DO UPDATE SET expires_at = excluded.expires_at
  WHERE sponsorship_token_uses.expires_at < ?`;

/**
 * The jti spends of one turn of the loop in one SQLite transaction (sqlitePerTurn.ts), with one prepared statement:
 * a spend through Kysely compiled and prepared its upsert each time and committed alone, ~200 µs CPU per signing call
 * under load (bench scenario u), where the rest of the token's check costs about half that. The statement is the
 * repository's: the insert meets the primary key, and only a row already expired is taken over, so it stays exact
 * (SQLite runs one writer at a time).
 */
export function createSqliteTokenSpend(sqlite: BetterSqlite3.Database): SqliteTokenSpend {
  const upsert = sqlite.prepare<[string, string, number, number]>(SQLITE_TOKEN_SPEND);
  return sqlitePerTurn(sqlite, (s: TokenSpend) => upsert.run(s.dappId, s.jti, s.expiresAt, s.nowSeconds).changes > 0);
}

import type BetterSqlite3 from 'better-sqlite3';

/** One jti to spend: the same arguments as SponsorshipTokenUseRepository.spend. */
export interface TokenSpend {
  readonly dappId: string;
  readonly jti: string;
  readonly expiresAt: number;
  readonly nowSeconds: number;
}

/** true: spent now; false: already spent (replayed); undefined: not decided here, the caller goes through Kysely. */
export type SqliteTokenSpend = (spend: TokenSpend) => Promise<boolean | undefined>;

interface Pending {
  readonly spend: TokenSpend;
  resolve(spent: boolean | undefined): void;
}

/**
 * The jti spends of one turn of the loop in one SQLite transaction, with one prepared statement: a spend through
 * Kysely compiled and prepared its upsert each time and committed alone, ~200 µs CPU per signing call under load
 * (bench scenario u), where the rest of the token's check costs about half that. The statement is the repository's:
 * the insert meets the primary key, and only a row already expired is taken over, so it stays exact (SQLite runs
 * one writer at a time). As the reservations' batch (sqliteReserve.ts): a batch that finds the connection inside
 * someone else's transaction, or that fails, hands its spends back to go alone.
 */
export function createSqliteTokenSpend(sqlite: BetterSqlite3.Database): SqliteTokenSpend {
  const upsert = sqlite.prepare<[string, string, number, number]>(
    `INSERT INTO sponsorship_token_uses (dapp_id, jti, expires_at) VALUES (?, ?, ?)
     ON CONFLICT (dapp_id, jti) DO UPDATE SET expires_at = excluded.expires_at
     WHERE sponsorship_token_uses.expires_at < ?`,
  );
  const runBatch = sqlite.transaction((batch: readonly Pending[]): boolean[] =>
    batch.map((p) => upsert.run(p.spend.dappId, p.spend.jti, p.spend.expiresAt, p.spend.nowSeconds).changes > 0),
  );
  let queue: Pending[] = [];
  const flush = () => {
    const batch = queue;
    queue = [];
    let spent: boolean[] | undefined;
    if (!sqlite.inTransaction) {
      try {
        spent = runBatch.immediate(batch);
      } catch {
        spent = undefined;
      }
    }
    batch.forEach((p, i) => {
      p.resolve(spent?.[i]);
    });
  };
  return (spend) =>
    new Promise((resolve) => {
      queue.push({ spend, resolve });
      if (queue.length === 1) setImmediate(flush);
    });
}

import type BetterSqlite3 from 'better-sqlite3';

/**
 * SQLite's change counter (migration 0014): a statement reading the number that every committed write to what the
 * services cache moves, whichever process or connection made it. The caches (store.ts) and the policy version check
 * (policyRepository.ts) read it to see others' changes; other writes (the request log's thread, the ledger) leave it.
 */
export function changeGeneration(sqlite: BetterSqlite3.Database): BetterSqlite3.Statement<[], number> {
  return sqlite.prepare<[], number>('SELECT generation FROM patron_change_counter WHERE id = 1').pluck();
}

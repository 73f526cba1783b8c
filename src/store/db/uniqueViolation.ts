/** True when a driver error is a UNIQUE constraint violation (SQLite or PostgreSQL). */
export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  // 23505: PostgreSQL unique_violation; SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY from better-sqlite3.
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

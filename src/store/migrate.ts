import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Plain-SQL migrations shared by SQLite and PostgreSQL: every `NNNN_name.sql` file in ./migrations, applied in
 * name order, each once, inside one transaction per start-up. Runs on the raw driver because both drivers
 * execute a multi-statement script natively there.
 */
export interface MigrationTarget {
  readonly kind: 'sqlite' | 'postgres';
  exec(sql: string): Promise<void>;
  transaction(fn: () => Promise<void>): Promise<void>;
  appliedNames(): Promise<string[]>;
}

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

export function listMigrations(dir: string = MIGRATIONS_DIR): { name: string; sql: string }[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort()
    .map((f) => ({ name: f.replace(/\.sql$/, ''), sql: fs.readFileSync(`${dir}/${f}`, 'utf8') }));
}

export async function runMigrations(target: MigrationTarget): Promise<string[]> {
  const migrations = listMigrations();
  const applied: string[] = [];
  await target.transaction(async () => {
    await target.exec(
      'CREATE TABLE IF NOT EXISTS patron_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)',
    );
    const done = new Set(await target.appliedNames());
    for (const m of migrations) {
      if (done.has(m.name)) continue;
      await target.exec(m.sql);
      await target.exec(`INSERT INTO patron_migrations (name, applied_at) VALUES ('${m.name}', ${Date.now()})`);
      applied.push(m.name);
    }
  });
  return applied;
}

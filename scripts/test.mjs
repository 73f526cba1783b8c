// Runs every *.test.ts under src/ and test/ with Node's test runner (through tsx). The back end is SQLite
// unless PATRON_TEST_DATABASE_URL names a PostgreSQL database. Extra arguments go to `node --test`.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : find(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

const files = [...find('src'), ...find('test')].sort();
const backend = process.env.PATRON_TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite';
console.log(`# ${files.length} test files, storage back end: ${backend}`);
const res = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=120000', ...process.argv.slice(2), ...files],
  { stdio: 'inherit' },
);
process.exit(res.status ?? 1);

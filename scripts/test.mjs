// Runs every *.test.ts under src/ and test/ with Node's test runner (through tsx). The back end is SQLite
// unless PATRON_TEST_DATABASE_URL names a PostgreSQL database. Arguments ending in .test.ts pick those files
// instead of all (`node scripts/test.mjs test/health.test.ts`); other arguments go to `node --test`.
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

// Contract tests load build/contracts/*.json; the build is a no-op (~0.1 s) when the sources are unchanged.
const build = spawnSync(process.execPath, ['scripts/build-contracts.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const picked = process.argv.slice(2).filter((a) => a.endsWith('.test.ts'));
const options = process.argv.slice(2).filter((a) => !a.endsWith('.test.ts'));
const files = picked.length > 0 ? picked : [...find('src'), ...find('test')].sort();
const backend = process.env.PATRON_TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite';
console.log(`# ${files.length} test files, storage back end: ${backend}`);
const res = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=120000', ...options, ...files],
  { stdio: 'inherit' },
);
process.exit(res.status ?? 1);

// Runs every *.test.ts under src/ and test/ with Node's test runner (through tsx). The back end is SQLite
// unless PATRON_TEST_DATABASE_URL names a PostgreSQL database. Arguments ending in .test.ts pick those files
// instead of all (`node scripts/test.mjs test/health.test.ts`), each in a process of its own; other arguments go
// to `node --test`.
//
// The whole suite runs most files several to a process: each file is imported inside a `describe` named after
// it, so its top-level hooks (before, after, beforeEach) stay scoped to its own tests, and its files run one
// after the other. Starting a process and loading the service's module graph (viem, Fastify, the EntryPoint
// artifacts) through tsx took ~2 s per file, most of the suite's time; a group pays it once. Files that are about
// processes or the machine (`*.process.test.ts`, the browser tests, ISOLATED below) keep a process each.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

function find(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : find(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

/**
 * Files that keep a process of their own (besides *.process.test.ts and *.browser.test.ts): the docs' snippets start
 * a Patron and run every block against it (~2 min on a loaded machine), which took the group it was in past the bound.
 */
const ISOLATED = new Set(['test/docs.snippets.test.ts']);
/** Processes the grouped files share: a few per runner slot, so one heavy group does not leave a slot idle. */
const GROUPS = 10;
const CONCURRENCY = 2;

// Contract tests load build/contracts/*.json; the build is a no-op (~0.1 s) when the sources are unchanged.
const build = spawnSync(process.execPath, ['scripts/build-contracts.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const picked = process.argv.slice(2).filter((a) => a.endsWith('.test.ts'));
const options = process.argv.slice(2).filter((a) => !a.endsWith('.test.ts'));
const files = picked.length > 0 ? picked : [...find('src'), ...find('test')].sort();
const backend = process.env.PATRON_TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite';

const alone = (f) => /\.(process|browser)\.test\.ts$/.test(f) || ISOLATED.has(f.replaceAll('\\', '/'));
const grouped = picked.length > 0 ? [] : files.filter((f) => !alone(f));
const own = picked.length > 0 ? files : files.filter(alone);

// Greedy by size (a rough proxy for a file's time): the largest first, each into the lightest group so far.
const groups = Array.from({ length: Math.min(GROUPS, grouped.length) }, () => ({ size: 0, files: [] }));
for (const f of [...grouped].sort((a, b) => statSync(b).size - statSync(a).size)) {
  const g = groups.reduce((min, x) => (x.size < min.size ? x : min));
  g.files.push(f);
  g.size += statSync(f).size;
}
const groupDir = join(tmpdir(), `patron-test-groups-${process.pid}`);
mkdirSync(groupDir, { recursive: true });
const entries = groups.map((g, i) => {
  const entry = join(groupDir, `group-${i + 1}.test.mjs`);
  const lines = [
    "import { describe } from 'node:test';",
    ...g.files.sort().map((f) => {
      const url = pathToFileURL(resolve(f)).href;
      return `describe(${JSON.stringify(f)}, async () => { await import(${JSON.stringify(url)}); });`;
    }),
  ];
  writeFileSync(entry, `${lines.join('\n')}\n`);
  return entry;
});

console.log(
  `# ${files.length} test files, storage back end: ${backend}` +
    (entries.length > 0
      ? `; ${grouped.length} of them in ${entries.length} shared processes, ${own.length} alone`
      : ''),
);
const res = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${CONCURRENCY}`,
    // Every test, and every process a group of files shares (the runner times a whole file as one test): a group
    // took over 120 s on a loaded 2-core machine, so the bound against a hang is 5 minutes.
    '--test-timeout=300000',
    // TAP as before, then the failed tests again at the very end (scripts/failedTestsReporter.mjs).
    '--test-reporter=tap',
    '--test-reporter-destination=stdout',
    '--test-reporter=./scripts/failedTestsReporter.mjs',
    '--test-reporter-destination=stdout',
    ...options,
    ...entries,
    ...own,
  ],
  { stdio: 'inherit' },
);
rmSync(groupDir, { recursive: true, force: true });
process.exit(res.status ?? 1);

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { cliCommandNames } from '../src/cli/commandTable.js';
import { loadConfig } from '../src/config/config.js';
import { DEFAULT_RATE_LIMITS } from '../src/config/rateLimitSettings.js';
import { createPatronMetrics } from '../src/metrics/patronMetrics.js';
import { PAYMASTER_METHODS } from '../src/rpc/registry.js';
import { RPC } from '../src/rpc/rpcErrors.js';
import { anchors, docFiles, prose, ROOT, relativeLinks } from './helpers/docsSnippets.js';

/**
 * The reference pages list everything the code has, and name nothing it lacks: every environment variable the
 * configuration and the CLI read, every metric the registry exports, every JSON-RPC method and error code, every
 * CLI command. And every relative link of the docs lands on a file and heading that exist.
 */
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const sources = (dir: string) =>
  readdirSync(path.join(ROOT, dir))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => read(path.join(dir, f)));

/** Names in `` `NAME` `` form in the page's table rows (a name in running text is not its entry). */
function tableNames(file: string, pattern: RegExp): Set<string> {
  const rows = read(file)
    .split('\n')
    .filter((l) => l.startsWith('|'));
  return new Set(rows.flatMap((r) => [...r.matchAll(pattern)].map((m) => m[1] ?? '')));
}

/** Files being written in parallel (issue 22), merged later: linked already, not here yet. */
const COMING = new Set(['docs/guides/signer-backends.md', 'docs/guides/signer-rotation.md']);

describe('docs/reference/configuration.md', () => {
  test('lists every environment variable src/config and the CLI read, and no other', () => {
    const code = [...sources('src/config'), ...sources('src/cli')].join('\n');
    // PATRON_* wherever it is named, and the plain names the environment schema takes (PORT, HOST, …).
    const used = new Set([
      ...[...code.matchAll(/\b(PATRON_[A-Z0-9_]*[A-Z0-9])\b/g)].map((m) => m[1] ?? ''),
      ...[...read('src/config/config.ts').matchAll(/^ {2}([A-Z][A-Z0-9_]*): /gm)].map((m) => m[1] ?? ''),
    ]);
    const documented = tableNames('docs/reference/configuration.md', /`([A-Z][A-Z0-9_]*[A-Z0-9])`/g);
    const missing = [...used].filter((v) => !documented.has(v)).sort();
    assert.deepEqual(missing, [], `read by the code, missing from the reference's tables: ${missing.join(', ')}`);
    const unknown = [...documented].filter((v) => !used.has(v)).sort();
    assert.deepEqual(unknown, [], `in the reference, read by no code: ${unknown.join(', ')}`);
  });
});

describe('deploy/patron.env.example', () => {
  test('names only documented variables, and with its REQUIRED lines filled is a valid production configuration', () => {
    const documented = tableNames('docs/reference/configuration.md', /`([A-Z][A-Z0-9_]*[A-Z0-9])`/g);
    const env: Record<string, string> = {};
    for (const line of read('deploy/patron.env.example').split('\n')) {
      const m = /^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
      if (m === null) continue;
      assert.ok(documented.has(m[2] ?? ''), `${m[2]} is not in docs/reference/configuration.md`);
      if (m[1] === undefined) env[m[2] ?? ''] = m[3] ?? '';
    }
    // What the operator fills in: the two keys, and the chain's own paymaster address.
    const filled = {
      ...env,
      NODE_ENV: 'production',
      PATRON_DATA_DIR: tmpdir(),
      PATRON_MASTER_KEY: 'ab'.repeat(32),
      PATRON_SIGNER_PRIVATE_KEY: 'cd'.repeat(32),
      PATRON_CHAINS: (env.PATRON_CHAINS ?? '').replace('0xYOUR_PAYMASTER', `0x${'12'.repeat(20)}`),
    };
    const config = loadConfig(filled);
    assert.equal(config.production, true);
    assert.deepEqual(
      config.paymaster.chains.map((c) => c.chainId),
      [8453],
    );
  });
});

describe('docs/reference/metrics.md', () => {
  test('lists every patron_ metric the registry exports, and no other', () => {
    const { registry } = createPatronMetrics({ chainIds: [1], processMetrics: true });
    const exported = new Set(
      registry
        .getMetricsAsArray()
        .map((m) => m.name)
        .filter((n) => n.startsWith('patron_')),
    );
    const documented = tableNames('docs/reference/metrics.md', /`(patron_[a-z0-9_]+)`/g);
    assert.deepEqual([...exported].filter((n) => !documented.has(n)).sort(), [], 'exported, not documented');
    assert.deepEqual([...documented].filter((n) => !exported.has(n)).sort(), [], 'documented, not exported');
  });
});

describe('docs/guides/rate-limits.md', () => {
  test('lists every rate limit with its default budget per 60 s', () => {
    const documented = new Map<string, number>();
    for (const row of read('docs/guides/rate-limits.md')
      .split('\n')
      .filter((l) => l.startsWith('| `'))) {
      const cells = row.split(' | ');
      const names = [...(cells[0] ?? '').matchAll(/`([a-zA-Z]+\.[a-zA-Z]+)`/g)].map((m) => m[1] ?? '');
      const values = (cells.at(-1) ?? '').replace(/ \|$/, '').split(', ');
      for (const [i, name] of names.entries()) documented.set(name, Number((values[i] ?? '').replace(/,/g, '')));
    }
    for (const [group, budgets] of Object.entries(DEFAULT_RATE_LIMITS)) {
      for (const [key, budget] of Object.entries(
        budgets as Record<string, { points: number; windowSeconds: number }>,
      )) {
        assert.equal(budget.windowSeconds, 60, `${group}.${key}: the page's defaults are per 60 s`);
        assert.equal(documented.get(`${group}.${key}`), budget.points, `${group}.${key}`);
      }
    }
  });
});

describe('docs/reference/json-rpc.md', () => {
  const doc = read('docs/reference/json-rpc.md');
  test('has a row for every method the endpoint serves', () => {
    for (const method of PAYMASTER_METHODS.keys()) assert.match(doc, new RegExp(`^\\| \`${method}\``, 'm'), method);
  });
  test('has a row for every error code, and no other', () => {
    const codes = new Set(Object.values(RPC).map(String));
    const rows = new Set([...doc.matchAll(/^\| (-32\d{3}) \|/gm)].map((m) => m[1] ?? ''));
    assert.deepEqual([...codes].filter((c) => !rows.has(c)).sort(), [], 'codes without a row');
    assert.deepEqual([...rows].filter((c) => !codes.has(c)).sort(), [], 'rows of no code');
  });
});

describe('docs/reference/cli.md', () => {
  test('names every CLI command', () => {
    const doc = read('docs/reference/cli.md');
    for (const name of cliCommandNames) assert.ok(doc.includes(`patron ${name}`), `patron ${name}`);
  });
});

describe('links', () => {
  test('every relative link in README.md and docs/ lands on a file, and on a heading of it', () => {
    const broken: string[] = [];
    for (const file of docFiles()) {
      for (const link of relativeLinks(file)) {
        const [target = '', anchor] = link.split('#');
        const resolved = target === '' ? file : path.normalize(path.join(path.dirname(file), target));
        if (COMING.has(resolved)) continue;
        if (!existsSync(path.join(ROOT, resolved))) broken.push(`${file}: ${link} (no ${resolved})`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(anchor))
          broken.push(`${file}: ${link} (no heading #${anchor} in ${resolved})`);
      }
    }
    assert.deepEqual(broken, []);
  });

  test('nothing in the docs points at README sections that moved', () => {
    const stale = docFiles().flatMap((file) =>
      prose(file)
        .split('\n')
        .filter((line) => /README, "/.test(line))
        .map((line) => `${file}: ${line}`),
    );
    assert.deepEqual(stale, []);
  });
});

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from './config.js';
import { KNOWN_SETTINGS, unknownSettings } from './knownSettings.js';

const SRC = fileURLToPath(new URL('..', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && e.name !== 'knownSettings.ts' ? [p] : [];
  });
}

test('KNOWN_SETTINGS is every PATRON_* name the source reads or names, and nothing else', () => {
  const named = new Set(
    sources(SRC).flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/\b(PATRON_[A-Z0-9_]*[A-Z0-9])\b/g)].map((m) => m[1] ?? ''),
    ),
  );
  assert.deepEqual([...KNOWN_SETTINGS].sort(), [...named].sort());
});

test('an unknown PATRON_* variable is refused with the nearest known name; the known and the tests are not', () => {
  assert.deepEqual(
    unknownSettings({ PATRON_WORKERS: '2', PATRON_URL: 'x', PATRON_TEST_DATABASE_URL: 'x', HOME: '/' }),
    [],
  );
  const [typo] = unknownSettings({ PATRON_SOLVENCY_FLOOR: '5' });
  assert.match(
    typo ?? '',
    /^PATRON_SOLVENCY_FLOOR is not a setting Patron knows \(did you mean PATRON_SOLVENCY_FLOOR_WEI\?\)/,
  );
  assert.match(unknownSettings({ PATRON_METRIC: 'on' })[0] ?? '', /did you mean PATRON_METRICS\?/);
  assert.match(unknownSettings({ PATRON_WORKRES: '2' })[0] ?? '', /did you mean PATRON_WORKERS\?/);
  // Nothing close: no guess.
  assert.doesNotMatch(unknownSettings({ PATRON_ZZZZZZZZZZZZZZZZ: '1' })[0] ?? '', /did you mean/);
  // At start: a configuration error (exit 78), beside the others, never silently ignored.
  assert.throws(
    () => loadConfig({ PATRON_SOLVENCY_FLOOR: '5' }),
    (err: unknown) =>
      err instanceof ConfigError && err.problems.some((p) => p.startsWith('PATRON_SOLVENCY_FLOOR is not a setting')),
  );
});

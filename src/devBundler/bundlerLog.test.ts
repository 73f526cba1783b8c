import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBundlerLog, MAX_LINE_LENGTH, MAX_LINES_PER_SECOND } from './bundlerLog.js';

function sink() {
  const lines: string[] = [];
  const put = (level: string) => (msg: string) => lines.push(`${level} ${msg}`);
  return { lines, sink: { info: put('info'), warn: put('warn'), error: put('error') } };
}

test("alto's pino lines keep their level and message, prefixed; other text is a warning", () => {
  const s = sink();
  const log = createBundlerLog({ sink: s.sink, now: () => 0 });
  log.line(JSON.stringify({ level: 50, msg: 'bundle failed', err: { message: 'nonce too low' } }));
  log.line(JSON.stringify({ level: 30, msg: 'started' }));
  log.line('    at foo (file.js:1:1)');
  log.line('   ');
  assert.deepEqual(s.lines, [
    'error [bundler] bundle failed: nonce too low',
    'info [bundler] started',
    'warn [bundler]     at foo (file.js:1:1)',
  ]);
});

test('at most MAX_LINES_PER_SECOND lines a second, the rest counted once the next second starts; long lines cut', () => {
  const s = sink();
  let now = 0;
  const log = createBundlerLog({ sink: s.sink, now: () => now });
  for (let i = 0; i < MAX_LINES_PER_SECOND + 5; i++) log.line(`line ${i}`);
  assert.equal(s.lines.length, MAX_LINES_PER_SECOND);
  now = 1000;
  log.line('x'.repeat(MAX_LINE_LENGTH + 100));
  assert.match(s.lines[MAX_LINES_PER_SECOND] ?? '', /… 5 more lines not shown/);
  assert.equal(
    s.lines[MAX_LINES_PER_SECOND + 1],
    `warn [bundler] ${'x'.repeat(MAX_LINE_LENGTH)}… (${MAX_LINE_LENGTH + 100} chars)`,
  );
});

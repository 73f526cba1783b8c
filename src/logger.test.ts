import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger, redactUrl } from './logger.js';

test('redactUrl keeps the route but not the API key of a paymaster URL', () => {
  const key = `pk.${'A1b2C3'.repeat(5)}xyz`;
  assert.equal(redactUrl(`/api/v1/31337/${key}`), '/api/v1/31337/pk.A1b…');
  assert.equal(redactUrl(`/api/v2/8453/${key}?x=1`), '/api/v2/8453/pk.A1b…?x=1');
  assert.equal(
    redactUrl('/api/v2/public/sdk/webhookParameters?webhookId=1'),
    '/api/v2/public/sdk/webhookParameters?webhookId=1',
  );
});

test('credential headers are redacted in logs', () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger({ level: 'info', destination: sink });
  logger.info({ req: { headers: { authtoken: 'pat.secret', apikey: 'pk.secret', authorization: 'Bearer x' } } }, 'm');
  assert.equal(lines.length, 1);
  assert.doesNotMatch(lines[0] ?? '', /secret|Bearer/);
});

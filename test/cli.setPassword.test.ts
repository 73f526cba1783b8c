import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { runCli } from '../src/cli/main.js';
import { LOCAL_ORIGIN } from './helpers/dashboardSession.js';
import { createTestContext, TEST_MASTER_KEY, type TestContext } from './helpers/testContext.js';

/** `patron account set-password`: the password from PATRON_PASSWORD or standard input, never from argv. */
let ctx: TestContext;
before(async () => {
  ctx = await createTestContext();
  await ctx.deps.accounts.createAccount({ email: 'cli-owner@example.com' });
});
after(() => ctx.close());

async function cli(argv: string[], env: Record<string, string> = {}, stdin?: string) {
  let stdout = '';
  let stderr = '';
  const code = await runCli({
    argv,
    env: { PATRON_DATA_DIR: '/nonexistent-patron-test', LOG_LEVEL: 'silent', ...env },
    io: {
      stdout: (t) => {
        stdout += t;
      },
      stderr: (t) => {
        stderr += t;
      },
      ...(stdin === undefined ? {} : { readStdin: async () => stdin }),
    },
    store: ctx.deps.store,
    masterKey: TEST_MASTER_KEY,
  });
  return { code, stdout, stderr };
}

const signIn = (password: string) =>
  ctx.app.inject({
    method: 'POST',
    url: '/api/admin/session',
    headers: { origin: LOCAL_ORIGIN },
    payload: { email: 'cli-owner@example.com', password },
  });

test('from PATRON_PASSWORD: the dashboard accepts it', async () => {
  const r = await cli(['account', 'set-password', '--email', 'cli-owner@example.com', '--json'], {
    PATRON_PASSWORD: 'a long enough password',
  });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(JSON.parse(r.stdout).passwordSet, true);
  assert.equal(r.stdout.includes('a long enough password'), false, 'never echoed');
  assert.equal((await signIn('a long enough password')).statusCode, 200);
});

test('from standard input (one trailing newline dropped); the old password stops working', async () => {
  const r = await cli(
    ['account', 'set-password', '--email', 'cli-owner@example.com', '--password-stdin'],
    {},
    'another long password\n',
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Dashboard password set for cli-owner@example.com/);
  assert.equal((await signIn('another long password')).statusCode, 200);
  assert.equal((await signIn('a long enough password')).statusCode, 401);
});

test('refusals: no password, a short one, an unknown account, a password as an argument', async () => {
  const none = await cli(['account', 'set-password', '--email', 'cli-owner@example.com']);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /give the password in PATRON_PASSWORD or on standard input/);
  const short = await cli(['account', 'set-password', '--email', 'cli-owner@example.com'], {
    PATRON_PASSWORD: 'short',
  });
  assert.match(short.stderr, /password must be at least 12 characters/);
  const unknown = await cli(['account', 'set-password', '--email', 'ghost@example.com'], {
    PATRON_PASSWORD: 'long enough password',
  });
  assert.match(unknown.stderr, /No account ghost@example.com/);
  const argv = await cli(['account', 'set-password', '--email', 'cli-owner@example.com', '--password', 'x']);
  assert.equal(argv.code, 2);
});

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import type { Store } from '../src/store/store.js';
import { runCliOnStore } from './helpers/cliRun.js';
import { dropTestSchema, openTestStore } from './helpers/testContext.js';
import { dappWire, isoDate } from './helpers/wireSchemas.js';

// `patron policies list|create|get|update|delete|usage` in-process, on the test store (src/cli/policyCommands.ts).

const policyWire = z.strictObject({
  policyId: z.uuid(),
  dappId: z.uuid(),
  name: z.string(),
  active: z.boolean(),
  rules: z.record(z.string(), z.unknown()),
  createdAt: isoDate,
  updatedAt: isoDate,
});
const policyOut = z.strictObject({ policy: policyWire });

let store: Store;
let schema: string | undefined;
let dir: string;
let dappId: string;

const cli = (argv: readonly string[]) => runCliOnStore({ store, argv });

async function cliJson<T>(argv: readonly string[], out: z.ZodType<T>): Promise<T> {
  const r = await cli([...argv, '--json']);
  assert.equal(r.code, 0, `patron ${argv.join(' ')}: ${r.stdout}${r.stderr}`);
  assert.equal(r.stderr, '');
  assert.equal(r.stdout.split('\n').length, 2, 'one JSON line');
  return out.parse(JSON.parse(r.stdout));
}

/** Fails with exit code 1: one `{"error":{"message"}}` line with --json, `patron: …` on stderr without. */
async function cliError(argv: readonly string[], message: string): Promise<void> {
  const j = await cli([...argv, '--json']);
  assert.equal(j.code, 1, `patron ${argv.join(' ')} --json: ${j.stdout}`);
  assert.deepEqual(JSON.parse(j.stdout), { error: { message } });
  const h = await cli(argv);
  assert.equal(h.code, 1);
  assert.equal(h.stderr, `patron: ${message}\n`);
}

const RULES = { caps: [{ scope: 'sender', unit: 'usd', limit: '2.5', resets: 'daily' }] };
const SENDER = '0x2222222222222222222222222222222222222222';

before(async () => {
  ({ store, schema } = await openTestStore());
  dir = mkdtempSync(path.join(tmpdir(), 'patron-cli-policies-'));
  await cliJson(['account', 'create', '--email', 'policies@example.com'], z.looseObject({}));
  const { dapp } = await cliJson(
    ['dapp', 'create', '--name', 'Policies', '--chain', '31337'],
    z.strictObject({ dapp: dappWire }),
  );
  dappId = dapp.dappId;
});
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await store.close();
  await dropTestSchema(schema);
});

describe('patron policies', () => {
  test('create, list, get, update (--active, --rules-file), usage, delete', async () => {
    const { policy } = await cliJson(
      ['policies', 'create', '--dapp', dappId, '--name', 'Daily', '--rules', JSON.stringify(RULES)],
      policyOut,
    );
    assert.deepEqual([policy.name, policy.active, policy.dappId, policy.rules], ['Daily', true, dappId, RULES]);

    const { policies } = await cliJson(
      ['policies', 'list', '--dapp', dappId],
      z.strictObject({ policies: z.array(policyWire) }),
    );
    assert.deepEqual(policies, [policy]);
    const human = await cli(['policies', 'list', '--dapp', dappId]);
    assert.equal(human.code, 0);
    assert.match(human.stdout, /policyId\s+name\s+active\s+rules/);
    assert.match(human.stdout, new RegExp(`${policy.policyId}\\s+Daily\\s+true`));

    const got = await cliJson(['policies', 'get', '--dapp', dappId, '--id', policy.policyId], policyOut);
    assert.deepEqual(got.policy, policy);

    const off = await cliJson(
      ['policies', 'update', '--dapp', dappId, '--id', policy.policyId, '--active', 'false'],
      policyOut,
    );
    assert.equal(off.policy.active, false);
    const file = path.join(dir, 'rules.json');
    const fileRules = { chainIds: [31337], caps: [{ scope: 'dapp', unit: 'ops', limit: '10', resets: 'hourly' }] };
    writeFileSync(file, JSON.stringify(fileRules));
    const replaced = await cliJson(
      ['policies', 'update', '--dapp', dappId, '--id', policy.policyId, '--rules-file', file, '--name', 'Hourly'],
      policyOut,
    );
    assert.deepEqual(
      [replaced.policy.name, replaced.policy.active, replaced.policy.rules],
      ['Hourly', false, fileRules],
    );

    const usage = await cliJson(
      ['policies', 'usage', '--dapp', dappId, '--id', policy.policyId, '--sender', SENDER],
      z.strictObject({ policyId: z.string(), sender: z.string(), user: z.null(), caps: z.array(z.looseObject({})) }),
    );
    assert.deepEqual(
      usage.caps.map((c) => [c.scope, c.unit, c.resets, c.limit, c.used, c.reserved]),
      [['dapp', 'ops', 'hourly', '10', '0', '0']],
    );
    const humanUsage = await cli(['policies', 'usage', '--dapp', dappId, '--id', policy.policyId]);
    assert.match(humanUsage.stdout, /scope\s+unit\s+resets\s+used\s+reserved\s+limit\s+resetsAt/);

    const deleted = await cliJson(
      ['policies', 'delete', '--dapp', dappId, '--id', policy.policyId],
      z.strictObject({ deleted: z.string() }),
    );
    assert.equal(deleted.deleted, policy.policyId);
    await cliError(['policies', 'get', '--dapp', dappId, '--id', policy.policyId], 'Policy not found');
  });

  test('errors: the same messages as the admin API, and the flags named', async () => {
    const create = (rules: string, name = 'x') => [
      'policies',
      'create',
      '--dapp',
      dappId,
      '--name',
      name,
      '--rules',
      rules,
    ];
    await cliError(
      create('{"caps":[{"scope":"dapp","unit":"usd","limit":"1.2345678"}]}'),
      'Invalid rules.caps.0.limit: expected USD as a decimal string with at most 6 decimals',
    );
    await cliError(create('{"startsAt":5,"endsAt":5}'), 'Invalid rules.endsAt: startsAt must be before endsAt');
    await cliError(create('{not json'), '--rules is not valid JSON');
    await cliError(create('[]'), 'rules must be a JSON object');
    await cliError(['policies', 'create', '--dapp', dappId, '--rules', '{}'], '--name is required');
    await cliError(['policies', 'create', '--dapp', dappId, '--name', 'x'], '--rules or --rules-file is required');
    await cliError(['policies', 'list'], '--dapp is required');
    const unknown = randomUUID();
    await cliError(['policies', 'list', '--dapp', unknown], `No dApp ${unknown}`);
    await cliError(
      ['policies', 'create', '--dapp', dappId, '--name', 'x', '--rules', '{}', '--rules-file', '/nonexistent'],
      'give --rules or --rules-file, not both',
    );
    await cliError(
      ['policies', 'create', '--dapp', dappId, '--name', 'x', '--rules-file', path.join(dir, 'missing.json')],
      `cannot read --rules-file ${path.join(dir, 'missing.json')}: ENOENT`,
    );
    await cliError([...create('{}'), '--active', 'maybe'], '--active takes true or false');

    const { policy } = await cliJson(create('{}', 'taken'), policyOut);
    await cliError(create('{}', 'taken'), 'A policy named "taken" already exists for this dApp');
    const update = ['policies', 'update', '--dapp', dappId, '--id', policy.policyId];
    await cliError(update, 'give at least one of --name, --active, --rules');
    await cliError([...update, '--rules', '{"maxOps":1}'], 'Invalid rules: Unrecognized key: "maxOps"');
    await cliError(
      ['policies', 'usage', '--dapp', dappId, '--id', policy.policyId, '--sender', '0x12'],
      'Invalid sender: expected a 20-byte 0x address',
    );
    await cliError(
      ['policies', 'usage', '--dapp', dappId, '--id', policy.policyId, '--user', 'x'.repeat(257)],
      "Invalid user: expected 1 to 256 characters (the token's sub)",
    );
    await cliError(['policies', 'delete', '--dapp', dappId, '--id', randomUUID()], 'Policy not found');
  });

  test('usage --user: the per-user caps of that user (a sponsorship token sub)', async () => {
    const rules = '{"caps":[{"scope":"user","unit":"usd","limit":"3","resets":"weekly"}]}';
    const { policy } = await cliJson(
      ['policies', 'create', '--dapp', dappId, '--name', 'per user', '--rules', rules],
      policyOut,
    );
    const usage = await cliJson(
      ['policies', 'usage', '--dapp', dappId, '--id', policy.policyId, '--user', 'user_42'],
      z.strictObject({ policyId: z.string(), sender: z.null(), user: z.string(), caps: z.array(z.looseObject({})) }),
    );
    assert.equal(usage.user, 'user_42');
    assert.deepEqual(
      usage.caps.map((c) => [c.scope, c.unit, c.resets, c.limit, c.used, c.reserved]),
      [['user', 'usd', 'weekly', '3', '0', '0']],
    );
    await cliJson(['policies', 'delete', '--dapp', dappId, '--id', policy.policyId], z.looseObject({}));
  });
});

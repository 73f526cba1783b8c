import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { getUserOperationHash } from 'viem/account-abstraction';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { runCliOnStore } from './helpers/cliRun.js';
import { buildDeployingOp, type PatronFixture, signAccount, submitHandleOps } from './helpers/patronPaymasterV06.js';
import { naiveCells, parseRfc4180, startsWithTrigger } from './helpers/rfc4180.js';
import { biconomyWireOp, type RpcFixture, startRpcFixture } from './helpers/rpcFixture.js';
import { createTokenIssuer, type TokenIssuer } from './helpers/sponsorshipTokens.js';
import { BACKEND, type Tenant, type TestContext } from './helpers/testContext.js';

/**
 * CSV injection through the ledger's export, the attacker's way (docs/guides/ledger.md, "CSV"): end users whose id
 * (the sponsorship token's `sub`, which the dApp's backend copies from what the user signed up with) is a formula
 * get their ops sponsored through the paymaster URL, the ops run with handleOps on the in-process chain and
 * settle, and the owner's export, over real HTTP on 127.0.0.1 and from `patron ledger export`, is read back with a
 * strict RFC 4180 reader and as a spreadsheet that ignores quotes would cut it on `,` `;` tab `|` or space.
 */
const HOSTILE: readonly (readonly [sub: string, exported: string])[] = [
  ['frank;=WEBSERVICE("http://127.0.0.1:9/x");x', 'frank;\'=WEBSERVICE("http://127.0.0.1:9/x");x'],
  ['＝HYPERLINK("http://127.0.0.1:9/","x")', '\'＝HYPERLINK("http://127.0.0.1:9/","x")'],
  ['  =1+1', "  '=1+1"],
  ['\u00a0=1+1', "\u00a0'=1+1"],
  ['\t@SUM(1,1)', "'\t'@SUM(1,1)"],
  ['say "hi", then; go\r\nnext|-1', 'say "hi", then; go\r\nnext|\'-1'],
  ['+33 612 345 678', "'+33 612 345 678"],
  ['alice-smith+tag@example.com', 'alice-smith+tag@example.com'],
];
const NUMBER_COLUMNS = ['chain_id', 'reserved_wei', 'actual_wei', 'actual_usd', 'block_number'];

let rpcFixture: RpcFixture;
let fx: PatronFixture;
let ctx: TestContext;
let tenant: Tenant;
let issuer: TokenIssuer;
let base: string;
let ops: UserOperationV06[] = [];
/** The chain's actualGasCost per userOpHash. */
let costs: Map<string, bigint>;
let csv: string;

before(async () => {
  rpcFixture = await startRpcFixture();
  ({ fx, ctx, tenant } = rpcFixture);
  issuer = await createTokenIssuer();
  await ctx.deps.accounts.setDappSponsorshipTokens({
    accountId: tenant.accountId,
    dappId: tenant.dappId,
    settings: issuer.settings(true),
  });
  base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  await sponsorSettleAndExport();
});
after(async () => {
  await rpcFixture.close();
});

/** The end user's op, sponsored with a token for `sub` (the webhook-data carrier @biconomy/account has), signed. */
async function sponsoredAs(sub: string, salt: bigint): Promise<UserOperationV06> {
  const op = await buildDeployingOp(fx, salt);
  const token = await issuer.mint({ aud: tenant.dappId, claims: { sub } });
  const { body } = await rpcFixture.rpc('pm_sponsorUserOperation', [
    biconomyWireOp(op, false),
    { mode: 'SPONSORED', calculateGasLimits: true, sponsorshipInfo: { webhookData: { sponsorshipToken: token } } },
  ]);
  assert.ok(body.result, JSON.stringify(body));
  return signAccount(fx, {
    ...op,
    paymasterAndData: body.result.paymasterAndData as `0x${string}`,
    callGasLimit: BigInt(body.result.callGasLimit as number),
    verificationGasLimit: BigInt(body.result.verificationGasLimit as number),
    preVerificationGas: BigInt(body.result.preVerificationGas as string),
  });
}

const hashOf = (op: UserOperationV06) =>
  getUserOperationHash({
    chainId: fx.chain.chainId,
    entryPointAddress: fx.entryPoint,
    entryPointVersion: '0.6',
    userOperation: op,
  }).toLowerCase();

/** Every hostile user's op sponsored, run in one handleOps, settled; then the owner's export over HTTP. */
async function sponsorSettleAndExport() {
  ops = [];
  for (const [i, [sub]] of HOSTILE.entries()) ops.push(await sponsoredAs(sub, 900n + BigInt(i)));
  const { events } = await submitHandleOps(fx, ops);
  assert.equal(events.length, HOSTILE.length);
  assert.ok(events.every((e) => e.args.success));
  costs = new Map(events.map((e) => [e.args.userOpHash.toLowerCase(), e.args.actualGasCost]));
  await ctx.deps.settlement.runOnce();
  const res = await fetch(`${base}/api/admin/dapps/${tenant.dappId}/ledger.csv?status=included`, {
    headers: { authorization: `Bearer ${tenant.authToken}` },
  });
  assert.equal(res.status, 200);
  csv = await res.text();
}

/** The export read strictly: the header's names, and each row's field by name. */
function exported() {
  const [header, ...rows] = parseRfc4180(csv);
  assert.ok(header !== undefined);
  const names = header.map((f) => f.value);
  const field = (row: (typeof rows)[number], name: string) => row[names.indexOf(name)]?.value;
  return { header, rows, field };
}

test(`the export is strict RFC 4180, every field quoted, every included op a row (${BACKEND})`, () => {
  const { header, rows } = exported();
  assert.ok(csv.endsWith('\r\n'));
  assert.equal(rows.length, HOSTILE.length);
  assert.ok(
    [header, ...rows].flat().every((f) => f.quoted),
    'every field quoted, the header too',
  );
});

test('each hostile id reads back as the rule writes it: quotes, commas, semicolons, line breaks kept', async (t) => {
  const { rows, field } = exported();
  for (const [i, [sub, expected]] of HOSTILE.entries()) {
    await t.test(JSON.stringify(sub), () => {
      const row = rows.find((r) => field(r, 'user_op_hash') === hashOf(ops[i] as UserOperationV06));
      assert.ok(row, 'its row');
      assert.equal(field(row, 'user'), expected);
      assert.equal(field(row, 'status'), 'included');
    });
  }
});

test('no cell a quote-blind spreadsheet cuts on , ; tab | or space starts with a formula trigger', async (t) => {
  for (const separator of [',', ';', '\t', '|', ' ']) {
    await t.test(JSON.stringify(separator), () => {
      assert.deepEqual(naiveCells(csv, separator).filter(startsWithTrigger), []);
    });
  }
});

test("the number columns stay plain numbers: the chain's charge, the block, the chain id", () => {
  const { rows, field } = exported();
  for (const row of rows) {
    assert.equal(field(row, 'actual_wei'), String(costs.get(field(row, 'user_op_hash') ?? '')));
    // actual_usd is empty here: the test chain has no price source.
    for (const name of NUMBER_COLUMNS) {
      assert.match(field(row, name) ?? '', name === 'actual_usd' ? /^$/ : /^\d+$/, name);
    }
  }
});

test('patron ledger export writes the same bytes through the same function', async () => {
  const cli = await runCliOnStore({
    store: ctx.deps.store,
    argv: ['ledger', 'export', '--dapp', tenant.dappId, '--status', 'included'],
  });
  assert.equal(cli.code, 0, cli.stderr);
  assert.equal(cli.stdout, csv);
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Address, type Hex, hexToBigInt, parseEther } from 'viem';
import { formatUserOperationRequest } from 'viem/account-abstraction';
import { privateKeyToAccount } from 'viem/accounts';
import { type DevChain, startDevChain } from '../src/chain/embeddedChain.js';
import { estimateGasV07 } from '../src/paymaster/entryPoints/v07/gasEstimatorV07.js';
import { altoPreVerificationGas } from '../src/paymaster/entryPoints/v07/preVerificationGasV07.js';
import type { UnpackedUserOperationV07 } from '../src/paymaster/entryPoints/v07/userOperationV07.js';
import { type AltoBundler, startAlto } from './helpers/altoBundler.js';
import { type ChainHttpServer, serveChainOverHttp } from './helpers/chainHttpServer.js';
import { deployPostOpPaymaster } from './helpers/postOpPaymaster.js';
import { draftOp, fund, type SimpleVersion, sign, simpleAccount, toViemOperation } from './helpers/simpleAccountV07.js';

/**
 * The estimate's preVerificationGas against a real bundler: alto 0.0.20 (the one the e2e tests run), which
 * refuses an op below its own figure (on its v2 API). alto's calculation is not importable (its package exports only its CLI),
 * so preVerificationGasV07 restates it, and this test holds the restatement to alto itself: an op priced one
 * gas below the restated figure is refused with exactly that figure as "required", and the estimate is
 * accepted and mined.
 */
const deployerKey: Hex = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba';
const bundlerKey: Hex = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const owner = privateKeyToAccount('0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6');
const recipient: Address = '0x00000000000000000000000000000000000000b0';

let dev: DevChain;
let http: ChainHttpServer;
let alto: AltoBundler;

before(async () => {
  dev = await startDevChain({
    signerAddress: owner.address,
    ownerPrivateKey: deployerKey,
    depositWei: parseEther('1'),
  });
  await dev.client.setBalance({ address: privateKeyToAccount(bundlerKey).address, value: parseEther('100') });
  http = await serveChainOverHttp(dev.chain);
  alto = await startAlto({
    rpcUrl: http.url,
    entryPoints: [dev.entryPoints['0.7'], dev.entryPoints['0.8']],
    executorKey: bundlerKey,
  });
});
after(async () => {
  await alto?.close();
  await http?.close();
  await dev?.close();
});

/**
 * alto's v2 API: its default (v1, what `/` serves) skips the preVerificationGas check and the gas price floor
 * altogether; v2 is where it enforces them.
 */
async function bundler(method: string, params: unknown[]): Promise<{ result?: unknown; error?: { message: string } }> {
  const res = await fetch(`${alto.url}/v2/rpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as { result?: unknown; error?: { message: string } };
}

async function send(version: SimpleVersion, op: UnpackedUserOperationV07) {
  return bundler('eth_sendUserOperation', [formatUserOperationRequest(toViemOperation(op)), dev.entryPoints[version]]);
}

async function receipt(hash: unknown): Promise<{ success: boolean }> {
  for (let i = 0; i < 100; i++) {
    const { result } = await bundler('eth_getUserOperationReceipt', [hash]);
    if (result !== null && result !== undefined) return result as { success: boolean };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no receipt for ${String(hash)}:\n${alto.output()}`);
}

/** Alto's `fast` gas price: its v2 API refuses fees below its floor. */
async function fees() {
  const { result } = await bundler('pimlico_getUserOperationGasPrice', []);
  const fast = (result as { fast: { maxFeePerGas: Hex; maxPriorityFeePerGas: Hex } }).fast;
  return { maxFeePerGas: hexToBigInt(fast.maxFeePerGas), maxPriorityFeePerGas: hexToBigInt(fast.maxPriorityFeePerGas) };
}

/** A funded account's op (index `index`), with `paymaster` when given, and its estimate. */
async function estimated(version: SimpleVersion, index: bigint, paymaster: Address | undefined) {
  const account = await simpleAccount(dev, owner, version, index);
  await fund(dev, account.address);
  const draft: UnpackedUserOperationV07 = {
    ...(await draftOp(account, [{ to: recipient, value: 1n }])),
    ...(await fees()),
    ...(paymaster === undefined
      ? {}
      : {
          paymaster,
          paymasterVerificationGasLimit: 60_000n,
          paymasterPostOpGasLimit: 150_000n,
          paymasterData: `0x${'00'.repeat(20)}5a`,
        }),
  };
  const limits = await estimateGasV07({
    request: dev.chain.request,
    entryPoint: dev.entryPoints[version],
    version,
    userOp: draft,
  });
  return { account, draft, limits };
}

describe('estimateGasV07 preVerificationGas against alto 0.0.20', () => {
  const cases = [
    { version: '0.7', paymaster: false },
    { version: '0.8', paymaster: false },
    { version: '0.8', paymaster: true },
  ] as const;
  let index = 900n;
  for (const { version, paymaster: withPaymaster } of cases) {
    const title = `v${version}${withPaymaster ? ' with a paymaster' : ''}`;
    it(`${title}: alto requires exactly altoPreVerificationGas, and accepts and mines the estimate`, async () => {
      const paymaster = withPaymaster
        ? await deployPostOpPaymaster(dev.client, {
            entryPoint: dev.entryPoints[version],
            postOpWrites: 1n,
            deposit: parseEther('1'),
          })
        : undefined;
      const short = await estimated(version, index++, paymaster);
      const required = altoPreVerificationGas(short.draft);
      const refused = await send(
        version,
        await sign(short.account, { ...short.draft, ...short.limits, preVerificationGas: required - 1n }),
      );
      assert.ok(refused.error, `alto accepted ${required - 1n}`);
      assert.match(refused.error.message, new RegExp(`preVerificationGas is not enough, required: ${required},`));

      const { account, draft, limits } = await estimated(version, index++, paymaster);
      assert.ok(limits.preVerificationGas >= altoPreVerificationGas(draft));
      const sent = await send(version, await sign(account, { ...draft, ...limits }));
      assert.equal(sent.error, undefined, `${sent.error?.message}\n${alto.output()}`);
      assert.equal((await receipt(sent.result)).success, true);
    });
  }
});

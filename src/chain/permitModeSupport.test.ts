import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type Address, createPublicClient, custom, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { UnavailableError } from '../errors/PatronError.js';
import type { ChainRuntime } from './chainRegistry.js';
import { deployPatronPaymasterV07 } from './deployPatronPaymasterV07.js';
import { createDevClient, type DevClient } from './devClient.js';
import { createEmbeddedChain, DEV_TOKENS, deployDevToken, type EmbeddedChain } from './embeddedChain.js';
import { deployEntryPoint } from './entryPoints.js';
import { createPermitModeSupport } from './permitModeSupport.js';

const owner = privateKeyToAccount('0x4b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba');
let chain: EmbeddedChain;
let dev: DevClient;
let current: Address;
let older: Address;

before(async () => {
  chain = await createEmbeddedChain({ fundedAccounts: [owner.address], balance: parseEther('10') });
  dev = createDevClient({ chain, account: owner });
  const entryPoint = await deployEntryPoint(dev, '0.7');
  current = await deployPatronPaymasterV07({
    client: dev,
    entryPoint,
    owner: owner.address,
    verifyingSigner: owner.address,
  });
  // A contract without MODE_TOKEN_PERMIT() answers as a paymaster deployed before the mode: its call reverts.
  older = (await deployDevToken({ client: dev, ...DEV_TOKENS[1] })).address;
});
after(() => chain?.close());

/** A chain runtime with only what the check reads: the id, the paymaster and a client whose calls are counted. */
function runtime(paymaster: Address, calls: { n: number }, fail = () => false): ChainRuntime {
  const client = createPublicClient({
    transport: custom(
      {
        request: async (args: { method: string; params?: unknown }) => {
          if (args.method === 'eth_call') {
            calls.n++;
            if (fail()) throw new Error('connection refused');
          }
          return chain.request(args as never);
        },
      },
      { retryCount: 0 },
    ),
  });
  return { chainId: chain.chainId, paymaster, client } as unknown as ChainRuntime;
}

test('a current PatronPaymasterV07 has the permit mode; a contract without MODE_TOKEN_PERMIT() or without code has not', async () => {
  const support = createPermitModeSupport();
  const calls = { n: 0 };
  assert.equal(await support.supported(runtime(current, calls)), true);
  assert.equal(await support.supported(runtime(older, calls)), false);
  assert.equal(await support.supported(runtime(`0x${'0'.repeat(38)}c1`, calls)), false);
  assert.equal(calls.n, 3);
  // Kept per deployment: asked again, no call.
  assert.equal(await support.supported(runtime(current, calls)), true);
  assert.equal(await support.supported(runtime(older, calls)), false);
  assert.equal(calls.n, 3);
});

test('a read that fails is UnavailableError, and is asked again next time rather than kept', async () => {
  const support = createPermitModeSupport();
  const calls = { n: 0 };
  let down = true;
  const chainRuntime = runtime(current, calls, () => down);
  await assert.rejects(support.supported(chainRuntime), UnavailableError);
  down = false;
  assert.equal(await support.supported(chainRuntime), true);
  assert.equal(calls.n, 2);
});

import assert from 'node:assert/strict';
import { type Address, keccak256, stringToHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devTokenAbi } from '../../src/chain/artifacts.js';
import { createDevClient, type DevClient, waitForSuccess } from '../../src/chain/devClient.js';
import { deployDevToken } from '../../src/chain/embeddedChain.js';
import type { Deps } from '../../src/deps.js';

/** A funded client on the test context's dev chain (31337), and a fresh 6-decimal token deployed with it. */
export async function tankTokenFixture(deps: Pick<Deps, 'chains'>, label: string) {
  const runtime = deps.chains.get(31337);
  assert.ok(runtime, 'the test context serves the dev chain');
  const account = privateKeyToAccount(keccak256(stringToHex(`patron-test-tanks-${label}`)));
  const dev: DevClient = createDevClient({ chain: { chainId: 31337, request: runtime.request }, account });
  await dev.setBalance({ address: account.address, value: 10n ** 20n });
  const token = await deployDevToken({ client: dev, name: 'Tank USD', symbol: 'TUSD', decimals: 6 });
  const mint = async (to: Address, amount: bigint) =>
    waitForSuccess(
      dev,
      await dev.writeContract({ address: token.address, abi: devTokenAbi, functionName: 'mint', args: [to, amount] }),
      'mint',
    );
  return { dev, token: token.address, mint, runtime };
}

import type { Address } from 'viem';
import type { DevClient } from './devClient.js';
import type { ForkOrigin } from './forkOrigin.js';

/**
 * Readies a freshly forked dev chain before anything is installed on it:
 * - funds `accounts` (the owner that deploys, the dev bundler's wallets) with hardhat_setBalance, since a fork
 *   has no genesis to fund them in and their keys are public phrases, so whatever they hold on the real chain
 *   means nothing here;
 * - mines one block at the wall clock (or just after the forked block, if the endpoint's clock is ahead). EDR
 *   keeps a fork's time relative to the forked block's, so a fork of an hour-old block would live an hour in the
 *   past, while Patron signs validity windows and alto checks them against the wall clock (ERC-4337 validUntil,
 *   validAfter): every sponsored op would be "not due yet". Mining this block moves the clock, and later blocks
 *   follow it. It also makes `latest` a local block, so nothing the set-up reads goes back to the forked one.
 */
export async function prepareFork(args: {
  readonly client: DevClient;
  readonly origin: ForkOrigin;
  readonly accounts: readonly Address[];
  readonly balance: bigint;
  readonly nowSeconds: bigint;
}): Promise<void> {
  const { client, origin } = args;
  for (const address of args.accounts) await client.setBalance({ address, value: args.balance });
  const next = args.nowSeconds > origin.timestamp ? args.nowSeconds : origin.timestamp + 1n;
  await client.setNextBlockTimestamp({ timestamp: next });
  await client.mine({ blocks: 1 });
}

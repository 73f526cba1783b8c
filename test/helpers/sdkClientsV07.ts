import { createBicoBundlerClient } from '@biconomy/abstractjs';
import { createSmartAccountClient } from 'permissionless';
import { http } from 'viem';
import { type SmartAccount, toSimple7702SmartAccount } from 'viem/account-abstraction';
import type { PrivateKeyAccount } from 'viem/accounts';
import { waitForSuccess } from '../../src/chain/devClient.js';
import { bundlerFees, type SdkE2eV07 } from './sdkE2eV07.js';

/* The v0.7+ SDK clients as the e2e tests and the sign-to-inclusion benchmark set them up on sdkE2eV07.ts's alto. */

type SmartAccountClientConfig = Parameters<typeof createSmartAccountClient>[0];

/**
 * permissionless's smart account client on alto with the bundler fee source it documents (bundlerFees), as a dApp
 * sets it up; `options` adds the ERC-20 flow's paymaster context and its prepareUserOperation.
 */
export function smartAccountClient(
  e2e: SdkE2eV07,
  account: SmartAccount,
  paymaster: SmartAccountClientConfig['paymaster'],
  options: {
    readonly paymasterContext?: SmartAccountClientConfig['paymasterContext'];
    readonly prepareUserOperation?: NonNullable<SmartAccountClientConfig['userOperation']>['prepareUserOperation'];
  } = {},
) {
  return createSmartAccountClient({
    account,
    chain: e2e.chain,
    client: e2e.publicClient,
    bundlerTransport: http(e2e.alto.url),
    paymaster,
    ...(options.paymasterContext === undefined ? {} : { paymasterContext: options.paymasterContext }),
    userOperation: {
      ...bundlerFees(e2e),
      ...(options.prepareUserOperation === undefined ? {} : { prepareUserOperation: options.prepareUserOperation }),
    },
  });
}

/**
 * @biconomy/abstractjs's own bundler client on alto. Its default fee source, Biconomy's biconomy_getGasFeeValues, is
 * one alto does not serve: the fees come from alto instead (bundlerFees), the one option a Nexus user would not set.
 * `paymasterContext`: the ERC-20 flow's (abstractjsTokenContext.ts); without one the client sends its sponsored one.
 */
export function bicoBundlerClient(
  e2e: SdkE2eV07,
  account: SmartAccount,
  paymaster: Parameters<typeof createBicoBundlerClient>[0]['paymaster'],
  paymasterContext?: Record<string, unknown>,
) {
  return createBicoBundlerClient({
    account,
    client: e2e.publicClient,
    bundlerUrl: e2e.alto.url,
    paymaster,
    ...(paymasterContext === undefined ? {} : { paymasterContext }),
    userOperation: bundlerFees(e2e),
  });
}

/**
 * The owner's EOA delegated to Simple7702Account v0.9 beforehand, by a type-4 transaction of its own (sent by the
 * fixture's bundler key, not the owner), as viem's Simple7702 account for it: its ops carry no authorization.
 */
export async function delegatedSimple7702V09(e2e: SdkE2eV07, owner: PrivateKeyAccount) {
  const authorization = await owner.signAuthorization({
    contractAddress: e2e.fx.simple7702Accounts['0.9'],
    chainId: e2e.chainId,
    nonce: 0,
  });
  await waitForSuccess(
    e2e.fx.client,
    await e2e.fx.bundler.sendTransaction({ to: owner.address, authorizationList: [authorization] }),
    'the delegation',
  );
  return toSimple7702SmartAccount({ client: e2e.publicClient, owner, entryPoint: '0.9' });
}

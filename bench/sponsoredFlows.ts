import { createBicoPaymasterClient } from '@biconomy/abstractjs';
import { http } from 'viem';
import { createBundlerClient, createPaymasterClient, type SmartAccount } from 'viem/account-abstraction';
import { bicoBundlerClient, delegatedSimple7702V09, smartAccountClient } from '../test/helpers/sdkClientsV07.js';
import { bundlerFees, type SdkE2eV07 } from '../test/helpers/sdkE2eV07.js';
import {
  biconomyAccountFor,
  counterCall,
  ownerFor,
  paymasterUrlFor,
  pimlicoClientFor,
  type SdkFlow,
  sendBiconomyOp,
  sendsCounterCall,
  simpleAccount,
} from './sdkFlow.js';

/** The client SDKs' sponsored flows (see sdkFlow.ts), as test/e2e.sdkV07.test.ts and e2e.biconomySmartAccountV2 drive them. */

/** viem's own bundler client on alto with the fee source permissionless documents. */
const viemBundler = (
  x: SdkE2eV07,
  account: SmartAccount,
  paymaster: Parameters<typeof createBundlerClient>[0]['paymaster'],
) =>
  createBundlerClient({
    account,
    client: x.publicClient,
    transport: http(x.alto.url),
    paymaster,
    userOperation: bundlerFees(x),
  });

/** viem createBundlerClient + createPaymasterClient: pm_getPaymasterStubData, alto's estimate, pm_getPaymasterData. */
function viemErc7677(version: '0.6' | '0.7' | '0.8'): SdkFlow {
  return {
    name: 'viem bundler + ERC-7677 paymaster client, SimpleAccount',
    version,
    async start({ x }) {
      const account = await simpleAccount(x, version, `viem-${version}`);
      const paymaster = createPaymasterClient({ transport: http(paymasterUrlFor(x, version)) });
      return sendsCounterCall(viemBundler(x, account, paymaster));
    },
  };
}

/** The same on v0.9 with viem's Simple7702 account, the EOA delegated beforehand by a type-4 transaction of its own. */
const viemErc7677Simple7702: SdkFlow = {
  name: 'viem bundler + ERC-7677 paymaster client, Simple7702',
  version: '0.9',
  async start({ x }) {
    const account = await delegatedSimple7702V09(x, ownerFor('viem-7702-0.9'));
    const paymaster = createPaymasterClient({ transport: http(paymasterUrlFor(x, '0.9')) });
    return sendsCounterCall(viemBundler(x, account, paymaster));
  },
};

/** permissionless createSmartAccountClient with its Pimlico client as the paymaster (which speaks ERC-7677 there). */
const permissionlessPimlico7677: SdkFlow = {
  name: 'permissionless smart account client + Pimlico client as paymaster (ERC-7677)',
  version: '0.7',
  async start({ x }) {
    const account = await simpleAccount(x, '0.7', 'permissionless-pimlico');
    return sendsCounterCall(smartAccountClient(x, account, pimlicoClientFor(x, '0.7')));
  },
};

/**
 * Pimlico's own dialect: permissionless's `pimlicoClient.sponsorUserOperation` (pm_sponsorUserOperation, which also
 * estimates) as viem's one paymaster hook, the place permissionless 0.1's `sponsorUserOperation` middleware had. viem
 * calls a lone `getPaymasterData` before estimating; its answer carries every limit, so alto estimates nothing.
 */
function pimlicoSponsorUserOperation(version: '0.6' | '0.7'): SdkFlow {
  return {
    name: 'permissionless Pimlico client pm_sponsorUserOperation as viem paymaster hook',
    version,
    async start({ x }) {
      const account = await simpleAccount(x, version, `pimlico-sponsor-${version}`);
      const pimlico = pimlicoClientFor(x, version);
      const bundler = viemBundler(x, account, {
        // viem's parameters carry chainId, entryPointAddress and context beside the op: the op alone is sent.
        getPaymasterData: async ({ chainId: _c, entryPointAddress: _e, context: _x, ...userOperation }) =>
          pimlico.sponsorUserOperation({ userOperation } as Parameters<typeof pimlico.sponsorUserOperation>[0]),
      });
      return sendsCounterCall(bundler);
    },
  };
}

/**
 * @biconomy/abstractjs: createBicoPaymasterClient (one pm_getPaymasterData before estimation, `expiryDuration: 300`)
 * with its own bundler client; no Nexus on the dev chain, so a v0.7 SimpleAccount, as e2e.sdkV07.test.ts does.
 */
const abstractjsSponsored: SdkFlow = {
  name: '@biconomy/abstractjs bico bundler + createBicoPaymasterClient, SimpleAccount',
  version: '0.7',
  async start({ x }) {
    const account = await simpleAccount(x, '0.7', 'abstractjs');
    const paymaster = createBicoPaymasterClient({ paymasterUrl: paymasterUrlFor(x, '0.7') });
    return sendsCounterCall(bicoBundlerClient(x, account, paymaster));
  },
};

/** @biconomy/account 4.x: buildUserOp (pm_sponsorUserOperation, Biconomy's dialect) → sendUserOp (signs) → wait. */
const biconomyAccountSponsored: SdkFlow = {
  name: '@biconomy/account buildUserOp → sendUserOp, Smart Account v2',
  version: '0.6',
  async start(ctx) {
    const { account } = await biconomyAccountFor(ctx, 'sponsored');
    return async () =>
      sendBiconomyOp(
        account,
        await account.buildUserOp([counterCall], { paymasterServiceData: { mode: 'SPONSORED' } }),
      );
  },
};

export const SPONSORED_FLOWS: readonly SdkFlow[] = [
  viemErc7677('0.6'),
  viemErc7677('0.7'),
  viemErc7677('0.8'),
  viemErc7677Simple7702,
  permissionlessPimlico7677,
  pimlicoSponsorUserOperation('0.6'),
  pimlicoSponsorUserOperation('0.7'),
  abstractjsSponsored,
  biconomyAccountSponsored,
];

import path from 'node:path';
import { type Address, keccak256, stringToBytes } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { chainDeployments } from '../config/chainSettings.js';
import type { Config } from '../config/config.js';
import { forkEndpointForDisplay } from '../config/devChainForkSettings.js';
import { StartRefusedError } from '../errors/StartRefusedError.js';
import { devChainKnownAccounts } from './canonicalAccounts.js';
import {
  type ChainRegistry,
  type ChainRuntime,
  createChainRegistry,
  eip1193ChainRuntime,
  httpChainRuntime,
} from './chainRegistry.js';
import { type DevChain, devChainDeployments, startDevChain } from './embeddedChain.js';
import { createFeeOracle, type FeeOracle } from './feeOracle.js';

/**
 * Owns the dev chain's contracts: a key derived from a public phrase, so anyone can reproduce it, which is
 * the point on a throwaway in-process chain and why it must never hold value anywhere else.
 */
const DEV_CHAIN_OWNER_KEY = keccak256(stringToBytes('patron embedded dev chain owner'));
const DEV_CHAIN_DEPOSIT_WEI = 1000n * 10n ** 18n;
/** Owns the dev chain's demo SimpleAccount (funded with the dev tokens); public on purpose, like the above. */
const DEV_DEMO_ACCOUNT_OWNER_KEY = keccak256(stringToBytes('patron embedded dev chain demo account'));

/**
 * The dev bundler's wallets (src/devBundler/): its executor sends the bundles, its utility wallet deploys alto's
 * simulation contracts. Funded at genesis and used by nothing else, so no other sender (the owner's set-up, a test's
 * top-up) races their nonces. Public phrases, like the keys above.
 */
export const DEV_BUNDLER_KEYS = {
  executor: keccak256(stringToBytes('patron embedded dev chain bundler executor')),
  utility: keccak256(stringToBytes('patron embedded dev chain bundler utility')),
} as const;

/**
 * The chains this process serves (deps.ts's first builder after the signer): the in-process dev chain when it is on
 * and the caller gave no chains (its EntryPoints and paymasters deployed for `signer`), then every configured chain;
 * and their fees, each chain's read at most once per refresh interval.
 */
export async function buildChains(args: {
  readonly config: Pick<Config, 'paymaster' | 'dataDir'>;
  /** The paymaster signer: the dev chain's paymasters name its address. */
  readonly signer: { readonly address: Address };
  /** Chains built by the caller (tests), instead of the dev chain and the configured ones. */
  readonly chains?: readonly ChainRuntime[] | undefined;
  /** Fees instead of the chains' own: the benchmark's guard-less reference (bench/sponsorServer.ts). */
  readonly fees?: FeeOracle | undefined;
  readonly logger: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  readonly now: () => number;
}): Promise<{ readonly devChain: DevChain | undefined; readonly chains: ChainRegistry; readonly fees: FeeOracle }> {
  const { config, logger } = args;
  const fork = config.paymaster.devChainFork;
  const devChain =
    args.chains === undefined && config.paymaster.devChain
      ? await startDevChain({
          signerAddress: args.signer.address,
          ownerPrivateKey: DEV_CHAIN_OWNER_KEY,
          depositWei: DEV_CHAIN_DEPOSIT_WEI,
          demoAccountOwner: privateKeyToAddress(DEV_DEMO_ACCOUNT_OWNER_KEY),
          fundedAccounts: [
            privateKeyToAddress(DEV_BUNDLER_KEYS.executor),
            privateKeyToAddress(DEV_BUNDLER_KEYS.utility),
          ],
          ...(fork === undefined ? {} : { fork: { ...fork, cacheDir: path.join(config.dataDir, 'fork-cache') } }),
        })
      : undefined;
  if (devChain?.fork !== undefined) {
    const { chainId, blockNumber, opStack } = devChain.fork;
    const twice = config.paymaster.chains.findIndex((c) => c.chainId === chainId);
    if (twice >= 0) {
      // Two chains under one id: the registry would keep one of them silently (config.ts refuses 31337 alike).
      await devChain.close();
      throw new StartRefusedError(
        `PATRON_CHAINS[${twice}].chainId: ${chainId} is the id of the chain the dev chain forks (PATRON_DEV_CHAIN_FORK_URL); serve one or the other`,
      );
    }
    // The block is said so that a restart can pin it (PATRON_DEV_CHAIN_FORK_BLOCK) and see the same chain.
    logger.info(
      { forkOf: forkEndpointForDisplay(devChain.fork.url), chainId, blockNumber: blockNumber.toString(), opStack },
      `the dev chain is a fork of chain ${chainId} at block ${blockNumber} (PATRON_DEV_CHAIN_FORK_BLOCK=${blockNumber} pins it)`,
    );
  }
  const chains = createChainRegistry(
    args.chains ?? [
      ...(devChain === undefined
        ? []
        : [
            eip1193ChainRuntime({
              chainId: devChain.chain.chainId,
              request: devChain.chain.request,
              entryPoint: devChain.entryPoint,
              paymaster: devChain.paymaster,
              deployments: devChainDeployments(devChain),
              simpleAccountFactory: devChain.simpleAccountFactory,
              accounts: devChainKnownAccounts(devChain),
              // A fork of an OP-stack L2 charges each transaction its L1 data: the preVerificationGas bound follows.
              ...(devChain.fork?.opStack === true ? { l1Fee: 'opStack' as const } : {}),
              ...(devChain.demoAccount === undefined
                ? {}
                : { demoAccount: { ...devChain.demoAccount, ownerPrivateKey: DEV_DEMO_ACCOUNT_OWNER_KEY } }),
            }),
          ]),
      ...config.paymaster.chains.map((c) =>
        httpChainRuntime({
          chainId: c.chainId,
          rpcUrl: c.rpcUrl,
          deployments: chainDeployments(c),
          maxBlockTimeSeconds: c.maxBlockTimeSeconds,
          l1Fee: c.l1Fee,
          accounts: c.accounts,
        }),
      ),
    ],
  );
  const fees =
    args.fees ??
    createFeeOracle({
      ...config.paymaster.fees,
      now: args.now,
      onError: (chainId, err) => logger.warn({ err, chainId }, 'could not read the chain fees'),
    });
  return { devChain, chains, fees };
}

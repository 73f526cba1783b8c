import type { Logger } from 'pino';
import { keccak256, stringToBytes } from 'viem';
import { type AccountService, createAccountService } from './accounts/accountService.js';
import { createSecretBox, loadMasterKey } from './accounts/secretBox.js';
import {
  type ChainRegistry,
  type ChainRuntime,
  createChainRegistry,
  eip1193ChainRuntime,
  httpChainRuntime,
} from './chain/chainRegistry.js';
import { type DevChain, startDevChain } from './chain/embeddedChain.js';
import type { Config } from './config/config.js';
import { type CryptoBackend, selectCryptoBackend } from './paymaster/cryptoBackend.js';
import { createPaymasterSigner, loadSignerKey, type PaymasterSigner } from './paymaster/paymasterSigner.js';
import { createSponsorshipService, type SponsorshipService } from './paymaster/sponsorshipService.js';
import { openStore, type Store } from './store/store.js';
import { createWebhookCaller, type WebhookCaller } from './webhooks/webhookCaller.js';
import { checkSponsorshipWebhooks } from './webhooks/webhookCheck.js';
import { createWebhookService, type WebhookService } from './webhooks/webhookService.js';
import { createWebhookUrlPolicy, type HostResolver, systemResolver } from './webhooks/webhookUrlPolicy.js';

/** Every dependency, built once and passed down explicitly; nothing below reads globals. */
export interface Deps {
  readonly config: Config;
  readonly logger: Logger;
  readonly store: Store;
  readonly accounts: AccountService;
  readonly webhooks: WebhookService;
  /** The outbound webhook check's HTTP client (keep-alive pools); closed with the rest. */
  readonly webhookCaller: WebhookCaller;
  readonly crypto: { readonly backend: CryptoBackend; readonly reason: string };
  readonly signer: PaymasterSigner;
  readonly chains: ChainRegistry;
  /** The in-process dev chain, when this process runs one. */
  readonly devChain: DevChain | undefined;
  readonly sponsorship: SponsorshipService;
  readonly now: () => number;
  close(): Promise<void>;
}

export interface DepsOverrides {
  /** A store opened by the caller (tests use in-memory SQLite or a per-test PostgreSQL schema). */
  readonly store?: Store;
  readonly resolver?: HostResolver;
  readonly now?: () => number;
  /** A fixed master key (tests), instead of config / the data directory. */
  readonly masterKey?: Buffer;
  /** A fixed signer key (tests), instead of the configured source. */
  readonly signerKey?: Uint8Array;
  /** Chains built by the caller (tests start their own dev chain), instead of the configured ones. */
  readonly chains?: readonly ChainRuntime[];
}

/**
 * Owns the dev chain's contracts: a key derived from a public phrase, so anyone can reproduce it, which is
 * the point on a throwaway in-process chain and why it must never hold value anywhere else.
 */
const DEV_CHAIN_OWNER_KEY = keccak256(stringToBytes('patron embedded dev chain owner'));
const DEV_CHAIN_DEPOSIT_WEI = 1000n * 10n ** 18n;

export async function createDeps(config: Config, logger: Logger, overrides: DepsOverrides = {}): Promise<Deps> {
  const now = overrides.now ?? Date.now;
  const masterKey =
    overrides.masterKey ?? loadMasterKey({ masterKeyHex: config.masterKeyHex, dataDir: config.dataDir });
  const store = overrides.store ?? (await openStore({ storage: config.storage }));
  const secretBox = createSecretBox(masterKey);
  const resolve = overrides.resolver ?? systemResolver;
  const accounts = createAccountService({
    store,
    secretBox,
    cacheTtlMs: config.cacheTtlMs,
    now,
    logger,
  });
  const webhooks = createWebhookService({
    store,
    urlPolicy: createWebhookUrlPolicy({
      allowPrivate: config.allowPrivateWebhookUrls,
      resolve,
    }),
    secretBox,
    maxWebhooksPerDapp: config.maxWebhooksPerDapp,
    cacheTtlMs: config.cacheTtlMs,
    now,
  });
  const webhookCaller = createWebhookCaller({
    timeoutMs: config.webhookTimeoutMs,
    maxResponseBytes: config.webhookMaxResponseBytes,
    allowPrivate: config.allowPrivateWebhookUrls,
    resolve,
    secretBox,
    now,
    logger,
  });
  const crypto = selectCryptoBackend();
  const signer = createPaymasterSigner({
    privateKey: overrides.signerKey ?? loadSignerKey(config.paymaster.signer, crypto.backend),
    crypto: crypto.backend,
  });
  const devChain =
    overrides.chains === undefined && config.paymaster.devChain
      ? await startDevChain({
          signerAddress: signer.address,
          ownerPrivateKey: DEV_CHAIN_OWNER_KEY,
          depositWei: DEV_CHAIN_DEPOSIT_WEI,
        })
      : undefined;
  const chains = createChainRegistry(
    overrides.chains ?? [
      ...(devChain === undefined
        ? []
        : [
            eip1193ChainRuntime({
              chainId: devChain.chain.chainId,
              request: devChain.chain.request,
              entryPoint: devChain.entryPoint,
              paymaster: devChain.paymaster,
              simpleAccountFactory: devChain.simpleAccountFactory,
            }),
          ]),
      ...config.paymaster.chains.map((c) =>
        httpChainRuntime({
          chainId: c.chainId,
          rpcUrl: c.rpcUrl,
          entryPoint: c.entryPoint,
          paymaster: c.paymaster,
        }),
      ),
    ],
  );
  const sponsorship = createSponsorshipService({
    signer,
    crypto: crypto.backend,
    policy: config.paymaster.sponsorship,
    now,
    checkWebhooks: ({ dappId, webhookData }) =>
      checkSponsorshipWebhooks({ webhooks, caller: webhookCaller, dappId, webhookData }),
  });
  const close = async () => {
    try {
      await webhookCaller.close();
      await devChain?.close();
    } finally {
      await store.close();
    }
  };
  return {
    config,
    logger,
    store,
    accounts,
    webhooks,
    webhookCaller,
    crypto,
    signer,
    chains,
    devChain,
    sponsorship,
    now,
    close,
  };
}

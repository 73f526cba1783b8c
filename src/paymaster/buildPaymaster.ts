import type { ChainRuntime } from '../chain/chainRegistry.js';
import type { FeeOracle } from '../chain/feeOracle.js';
import { createGatingReads } from '../chain/gatingReads.js';
import { type ChainReads, createChainReads } from '../chain/senderCode.js';
import type { Config } from '../config/config.js';
import type { CryptoBackend } from '../crypto/cryptoBackend.js';
import { createPolicyGate, type PolicyGate, type PolicyGateDeps } from '../policies/policyGate.js';
import type { PolicyService } from '../policies/policyService.js';
import type { TokenCatalog } from '../tokens/tokenCatalog.js';
import type { WebhookCaller } from '../webhooks/webhookCaller.js';
import { checkSponsorshipWebhooks } from '../webhooks/webhookCheck.js';
import type { WebhookService } from '../webhooks/webhookService.js';
import { type BoundsResolver, createBoundsResolver } from './boundsResolver.js';
import type { IssuedSignature } from './requestFacts.js';
import type { PaymasterSigner } from './signer/paymasterSigner.js';
import { createSponsorshipService, type SponsorshipService } from './sponsored/sponsorshipService.js';
import { createTokenPaymasterService, type TokenPaymasterService } from './token/tokenPaymasterService.js';
import { assertTokenModeStaked } from './token/tokenStake.js';
import type { CheckWebhooks } from './webhookApproval.js';

/**
 * What both modes ask of the signing gate (solvency/signingGate.ts, which is built before them): whether Patron may
 * sign for the paymaster at all, the signature counted against its deposit, and whether it is staked.
 */
export interface PaymasterGate {
  /** Both modes' early check, before any work: the paymaster still accepts the key, and the deposit covers signing. */
  assertCanSign(chain: ChainRuntime): void;
  /** An issued signature, counted against the deposit as it is issued. */
  admitSignature(op: IssuedSignature): void;
  /** Room for the op within this instance's share of the deposit; undefined where no instances share it. */
  readonly ensureHeadroom: ((op: IssuedSignature) => Promise<void>) | undefined;
  /** Whether the paymaster is staked, as last read (undefined: not read yet). */
  staked(chain: ChainRuntime): boolean | undefined;
}

export interface Paymaster {
  readonly sponsorship: SponsorshipService;
  readonly tokenPaymaster: TokenPaymasterService;
  /** The signing bounds of a dApp on a chain: deployment, chain and dApp settings merged. */
  readonly bounds: BoundsResolver;
  /** The policy gate and the senders' code reads, shared with the MEE sponsor (src/mee/buildMeeSponsor.ts). */
  readonly policyGate: PolicyGate;
  readonly chainReads: ChainReads;
}

/**
 * The two modes as deps.ts builds them, with what only they use: the bounds, the cached reads of senders' code
 * and of the gating rules, the policy gate over the dApps' policies and the spend ledger, and the dApps' webhooks.
 */
export function buildPaymaster(args: {
  readonly config: Pick<Config, 'paymaster' | 'cacheMaxEntries' | 'gatingCacheMs'>;
  readonly signer: PaymasterSigner;
  readonly crypto: CryptoBackend;
  readonly fees: FeeOracle;
  /** Bounds instead of the configured ones: the benchmark's guard-less reference (bench/sponsorServer.ts). */
  readonly bounds?: BoundsResolver | undefined;
  readonly tokenCatalog: TokenCatalog;
  readonly gate: PaymasterGate;
  readonly policies: Pick<PolicyService, 'policiesOf'>;
  /** The spend ledger, which the policy gate reserves against. */
  readonly store: { readonly spendLedger: PolicyGateDeps['ledger'] };
  readonly nativeUsdMicros: PolicyGateDeps['nativeUsdMicros'];
  /** policy.threshold's emitter (the lifecycle events, built before). */
  readonly onThreshold: PolicyGateDeps['onThreshold'];
  readonly webhooks: { readonly service: WebhookService; readonly caller: WebhookCaller };
  readonly now: () => number;
  readonly logger?: { warn(obj: object, msg: string): void } | undefined;
}): Paymaster {
  const { config, signer, crypto, fees, gate, now } = args;
  const bounds =
    args.bounds ??
    createBoundsResolver({
      deployment: config.paymaster.bounds,
      chains: new Map(config.paymaster.chains.flatMap((c) => (c.bounds === undefined ? [] : [[c.chainId, c.bounds]]))),
    });
  const policies = createPolicyGate({
    policiesOf: (dappId, options) => args.policies.policiesOf(dappId, options),
    ledger: args.store.spendLedger,
    nativeUsdMicros: args.nativeUsdMicros,
    now,
    onThreshold: args.onThreshold,
  });
  const checkWebhooks: CheckWebhooks = (check) =>
    checkSponsorshipWebhooks({ webhooks: args.webhooks.service, caller: args.webhooks.caller, ...check });
  // One bounded cache of the senders' code and proxy slots, and one of the gating rules' balances and attestations,
  // for every chain and both modes (chain/senderCode.ts, chain/gatingReads.ts).
  const chainReads = createChainReads({ maxEntries: config.cacheMaxEntries, now });
  const gatingReads = createGatingReads({ ttlMs: config.gatingCacheMs, now });
  const common = {
    signer,
    crypto,
    policy: config.paymaster.sponsorship,
    now,
    fees,
    assertCanSign: (chain: ChainRuntime) => gate.assertCanSign(chain),
    admitSignature: (op: IssuedSignature) => gate.admitSignature(op),
    ensureHeadroom: gate.ensureHeadroom,
    policies,
    checkWebhooks,
    chainReads,
    gatingReads,
  };
  return {
    sponsorship: createSponsorshipService(common),
    tokenPaymaster: createTokenPaymasterService({
      ...common,
      tokens: args.tokenCatalog,
      logger: args.logger,
      assertStaked: (chain) => assertTokenModeStaked(chain, gate.staked(chain)),
    }),
    bounds,
    policyGate: policies,
    chainReads,
  };
}

import { type Address, formatUnits, getAddress, parseUnits } from 'viem';
import { entryPoint07Address, entryPoint08Address, entryPoint09Address } from 'viem/account-abstraction';
import { z } from 'zod';
import { BOUNDS_KEYS, boundsOverrideSchema, type SigningBounds } from './boundsSettings.js';
import { closedErrors, closedObject, issueText, movedUnder } from './closedObject.js';
import type { DevChainForkSettings } from './devChainForkSettings.js';
import { ACCOUNT_KINDS, knownAccountsSchema } from './knownAccountsSettings.js';
import { l1FeeSchema } from './l1FeeSettings.js';
import type { SignerSetting } from './signerSettings.js';

/**
 * Chains, the paymaster signer and the sponsorship window, from the environment (part of loadConfig).
 * Real chains come as JSON in PATRON_CHAINS; the embedded dev chain (EDR, chain 31337) is on by default
 * outside production.
 */
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const CANONICAL_ENTRY_POINT_V06 = '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789';

const ZERO_ADDRESS = /^0x0{40}$/;

/** A contract's address: the zero address is never one (an unset value pasted in), so it is refused. */
const address = (what: string) =>
  z
    .string({ error: `${what} must be an address` })
    .regex(ADDRESS, { error: `${what} must be an address` })
    .refine((v) => !ZERO_ADDRESS.test(v), { error: `${what} must not be the zero address` })
    .transform((v) => getAddress(v.toLowerCase()));

const maxAgeSeconds = z
  .number({ error: 'maxAgeSeconds must be a number of seconds' })
  .int({ error: 'maxAgeSeconds must be a whole number of seconds' })
  .min(1, { error: 'maxAgeSeconds must be from 1 to 2592000' })
  .max(2_592_000, { error: 'maxAgeSeconds must be from 1 to 2592000' });

/** A decimal with at most 18 fractional digits, as text, so no value passes through a float. */
const DECIMAL_18 = /^\d+(\.\d{1,18})?$/;
const canonicalDecimal = (v: string) => formatUnits(parseUnits(v, 18), 18);

const PRICE_NOT_OBJECT = 'price source must be an object with "type" one of "fixed", "chainlink", "coingecko"';

const fixedPriceSpec = closedObject(
  {
    type: z.literal('fixed'),
    usd: z
      .string({ error: 'usd must be a decimal string such as "1.00"' })
      .regex(DECIMAL_18, { error: 'usd must be a decimal string such as "1.00" (at most 18 decimals)' })
      .refine((v) => parseUnits(v, 18) > 0n, { error: 'usd must be positive' })
      .transform(canonicalDecimal),
  },
  { notObject: PRICE_NOT_OBJECT },
);

const chainlinkPriceSpec = closedObject(
  {
    type: z.literal('chainlink'),
    aggregator: address('aggregator'),
    // Required: the right bound is the feed's heartbeat, which differs per feed (3600 s, 86400 s, ...).
    maxAgeSeconds,
  },
  { notObject: PRICE_NOT_OBJECT },
);

const coinGeckoPriceSpec = closedObject(
  {
    type: z.literal('coingecko'),
    // CoinGecko ids are lower-case slugs ("usd-coin"); the restriction keeps them safe inside `ids=a,b`.
    id: z
      .string({ error: 'id must be a CoinGecko coin id such as "usd-coin"' })
      .regex(/^[a-z0-9][a-z0-9._-]{0,99}$/, { error: 'id must be a CoinGecko coin id such as "usd-coin"' }),
    baseUrl: z
      .string({ error: 'baseUrl must be an http(s) URL' })
      .default('https://api.coingecko.com/api/v3')
      .refine(
        (v) => {
          if (!/^https?:\/\//.test(v) || !URL.canParse(v)) return false;
          const u = new URL(v);
          // Credentials belong in apiKey (sent as a header, never logged), not in a URL that ends up in logs.
          return u.username === '' && u.password === '' && u.search === '' && u.hash === '';
        },
        { error: 'baseUrl must be an http(s) URL without credentials, query or fragment' },
      )
      .transform((v) => v.replace(/\/+$/, '')),
    apiKey: z.string({ error: 'apiKey must be a string' }).min(1, { error: 'apiKey must not be empty' }).optional(),
    apiKeyHeader: z
      .string({ error: 'apiKeyHeader must be an HTTP header name' })
      .regex(/^[A-Za-z0-9-]{1,100}$/, { error: 'apiKeyHeader must be an HTTP header name' })
      .default('x-cg-demo-api-key'),
    maxAgeSeconds: maxAgeSeconds.default(600),
  },
  { notObject: PRICE_NOT_OBJECT },
);

/** Where a USD price comes from: `fixed` (dev chain), `chainlink` (a feed on the same chain) or `coingecko`. */
export const priceSourceSpecSchema = z.discriminatedUnion(
  'type',
  [fixedPriceSpec, chainlinkPriceSpec, coinGeckoPriceSpec],
  { error: PRICE_NOT_OBJECT },
);
/** A price source after validation and defaults (what the pricing code receives). */
export type PriceSourceSpec = z.output<typeof priceSourceSpecSchema>;
/** A price source as written in PATRON_CHAINS (defaults not yet applied). */
export type PriceSourceSpecInput = z.input<typeof priceSourceSpecSchema>;

/** A percentage in [0, 100] as a canonical decimal string ("10", "0.5"): exact, never a float. */
const premiumPercentage = z
  .union([z.string(), z.number()], { error: 'premiumPercentage must be a number or a decimal string' })
  .default('0')
  .transform((v, ctx) => {
    // A JSON number's shortest text; tiny numbers print in exponent form ("1e-7"), refused below.
    const text = typeof v === 'number' ? String(v) : v.trim();
    if (!DECIMAL_18.test(text) || parseUnits(text, 18) > 100n * 10n ** 18n) {
      ctx.addIssue({ code: 'custom', message: 'premiumPercentage must be a decimal from 0 to 100' });
      return z.NEVER;
    }
    return canonicalDecimal(text);
  });

export const tokenSettingSchema = closedObject(
  {
    address: address('address'),
    logoUrl: z
      .string({ error: 'logoUrl must be an http(s) URL' })
      .refine((v) => v === '' || (/^https?:\/\//.test(v) && URL.canParse(v)), {
        error: 'logoUrl must be an http(s) URL',
      })
      .default(''),
    premiumPercentage,
    price: priceSourceSpecSchema,
    /**
     * The token has Circle FiatToken v2.2's permit (USDC, EURC): `permit(owner, spender, value, deadline, bytes)`,
     * ERC-1271 for an owner with code, no TIMESTAMP at the maximum deadline. The operator vouches for these
     * semantics; the token mode's permit (mode 3) is then offered (docs/guides/token-mode.md).
     */
    permit: z.boolean({ error: 'permit must be true or false' }).default(false),
  },
  { notObject: 'each token must be an object {address, price, logoUrl?, premiumPercentage?, permit?}' },
);
/** One token accepted for gas payment on a chain, after validation and defaults. */
export type TokenSetting = z.output<typeof tokenSettingSchema>;

const PAYMASTER_VERSIONS = ['0.7', '0.8', '0.9'] as const;

/**
 * Where a key written at a chain's top level belongs: a versioned paymaster under `paymasters` (`paymasterV07`,
 * `paymaster_0_8`), a signing bound under `bounds`, an account kind under `accounts`.
 */
function misplacedChainKey(key: string, input: Readonly<Record<string, unknown>>): string | undefined {
  const version = /^paymasters?[^a-z0-9]*v?[^a-z0-9]*0?[^a-z0-9]*([6-9])$/i.exec(key)?.[1];
  if (version === '6') return 'did you mean paymaster (the EntryPoint v0.6 paymaster)?';
  if (version !== undefined) return `did you mean paymasters.0.${version} ("paymasters": {"0.${version}": "0x…"})?`;
  const value = input[key];
  if ((BOUNDS_KEYS as readonly string[]).includes(key)) return movedUnder({ parent: 'bounds', key, value });
  if ((ACCOUNT_KINDS as readonly string[]).includes(key)) return movedUnder({ parent: 'accounts', key, value });
  return undefined;
}

const chainEntry = closedObject(
  {
    chainId: z
      .number({ error: 'chainId must be a number' })
      .int({ error: 'chainId must be a positive integer' })
      .positive({ error: 'chainId must be a positive integer' })
      .max(Number.MAX_SAFE_INTEGER, { error: 'chainId must be a positive integer' }),
    rpcUrl: z.string({ error: 'rpcUrl must be a string' }).refine((v) => /^https?:\/\//.test(v) && URL.canParse(v), {
      error: 'rpcUrl must be an http(s) URL',
    }),
    /** Patron's paymaster for EntryPoint v0.6 (`entryPoint`); optional when `paymasters` names others. */
    paymaster: address('paymaster').optional(),
    /**
     * Patron's paymasters for EntryPoint v0.7, v0.8 and v0.9 (PatronPaymasterV07, one per EntryPoint, each at the
     * canonical EntryPoint address): `{"0.7": "0x…", "0.8": "0x…"}`.
     */
    paymasters: z
      .partialRecord(
        z.enum(PAYMASTER_VERSIONS, { error: 'paymasters keys must be "0.7", "0.8" or "0.9"' }),
        address('each paymasters value'),
        {
          error: closedErrors({
            known: PAYMASTER_VERSIONS,
            notObject:
              'paymasters must be an object whose keys are "0.7", "0.8" or "0.9" and values paymaster addresses',
            misplaced: (key) => {
              const v = /^v?0?\.?([6-9])$/i.exec(key)?.[1];
              if (v === '6') return 'the v0.6 paymaster is the chain\'s "paymaster", not a paymasters key';
              return v === undefined ? 'paymasters keys are "0.7", "0.8" or "0.9"' : `did you mean "0.${v}"?`;
            },
          }),
        },
      )
      .optional(),
    entryPoint: address('entryPoint').default(getAddress(CANONICAL_ENTRY_POINT_V06)),
    /** The native coin's USD price; required when tokens are listed (exchange rates are native-relative). */
    nativeUsd: priceSourceSpecSchema.optional(),
    tokens: z.array(tokenSettingSchema, { error: 'tokens must be an array' }).optional(),
    /**
     * An upper bound of the chain's block time in seconds, for EntryPoint v0.9's block-number windows (docs/reference/json-rpc.md,
     * "Block-number windows on v0.9"): 12 (Ethereum's slot) unless set; a rollup's operator sets its own.
     */
    maxBlockTimeSeconds: z
      .number({ error: 'maxBlockTimeSeconds must be a number of seconds' })
      .positive({ error: 'maxBlockTimeSeconds must be positive' })
      .max(3600, { error: 'maxBlockTimeSeconds must be at most 3600' })
      .optional(),
    /** This chain's signing bounds, over the deployment's (docs/guides/signing-bounds.md, "Signing bounds"). */
    bounds: boundsOverrideSchema.optional(),
    /** The L2's L1 data fee oracle, which the preVerificationGas bound follows (l1FeeSettings.ts); none unless set. */
    l1Fee: l1FeeSchema.optional(),
    /**
     * Smart accounts this chain has beyond the canonical ones, per kind (config/knownAccountsSettings.ts): what a
     * policy's contract allowlist recognises (docs/guides/policies.md, "How policies are enforced").
     */
    accounts: knownAccountsSchema.optional(),
  },
  {
    notObject: 'each chain must be an object {chainId, rpcUrl, paymaster?, entryPoint?, paymasters?}',
    misplaced: misplacedChainKey,
  },
).superRefine((chain, ctx) => {
  if (chain.paymaster === undefined && Object.keys(chain.paymasters ?? {}).length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['paymaster'],
      message: 'a chain needs a paymaster (EntryPoint v0.6) or paymasters (v0.7+)',
    });
  }
  // One contract serves one EntryPoint (its immutable), so one address under two versions is a paste error.
  const versions = new Map<string, string>();
  if (chain.paymaster !== undefined) versions.set(chain.paymaster, 'paymaster (v0.6)');
  for (const v of PAYMASTER_VERSIONS) {
    const pm = chain.paymasters?.[v];
    if (pm === undefined) continue;
    const other = versions.get(pm);
    if (other !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['paymasters'],
        message: `paymasters.${v} is ${pm}, the same contract as ${other}: each EntryPoint version has its own paymaster`,
      });
    }
    versions.set(pm, `paymasters.${v}`);
  }
  const tokens = chain.tokens ?? [];
  if (tokens.length > 0 && chain.nativeUsd === undefined) {
    ctx.addIssue({ code: 'custom', path: ['nativeUsd'], message: 'nativeUsd is required when tokens are listed' });
  }
  const seen = new Set<string>();
  tokens.forEach((token, i) => {
    if (seen.has(token.address)) {
      ctx.addIssue({
        code: 'custom',
        path: ['tokens', i, 'address'],
        message: `token ${token.address} is listed twice`,
      });
    }
    seen.add(token.address);
  });
});

export const chainsFromEnv = z
  .string()
  .optional()
  .transform((v, ctx) => {
    if (v === undefined || v.trim() === '') return [];
    let json: unknown;
    try {
      json = JSON.parse(v);
    } catch {
      ctx.addIssue({
        code: 'custom',
        message: 'PATRON_CHAINS must be a JSON array of {chainId, rpcUrl, paymaster, entryPoint?}',
      });
      return z.NEVER;
    }
    const r = z.array(chainEntry, { error: 'PATRON_CHAINS must be a JSON array' }).safeParse(json);
    if (!r.success) {
      const issue = r.error.issues[0];
      // `PATRON_CHAINS[0].tokens[1]: …`: the object holding the problem; a trailing field is named by the message.
      const message =
        issue === undefined ? 'PATRON_CHAINS is invalid' : issueText({ root: 'PATRON_CHAINS', issue, dropField: true });
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    const first = new Map<number, number>();
    for (const [i, c] of r.data.entries()) {
      const earlier = first.get(c.chainId);
      if (earlier !== undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `PATRON_CHAINS[${i}].chainId: chain ${c.chainId} is listed twice (PATRON_CHAINS[${earlier}] too); give each chain one entry`,
        });
        return z.NEVER;
      }
      first.set(c.chainId, i);
    }
    return r.data;
  });

export type ChainSetting = z.infer<typeof chainEntry>;

/** The canonical EntryPoint of each version (viem's, the addresses every SDK uses). */
const CANONICAL_ENTRY_POINTS = {
  '0.6': CANONICAL_ENTRY_POINT_V06,
  '0.7': entryPoint07Address,
  '0.8': entryPoint08Address,
  '0.9': entryPoint09Address,
} as const;

/** A chain's paymaster deployments as configured: v0.6's first when it has one, then v0.7, v0.8, v0.9. */
export function chainDeployments(
  c: ChainSetting,
): readonly { entryPointVersion: '0.6' | '0.7' | '0.8' | '0.9'; entryPoint: Address; paymaster: Address }[] {
  const v06 =
    c.paymaster === undefined
      ? []
      : [{ entryPointVersion: '0.6' as const, entryPoint: c.entryPoint, paymaster: c.paymaster }];
  const later = (['0.7', '0.8', '0.9'] as const).flatMap((v) => {
    const paymaster = c.paymasters?.[v];
    return paymaster === undefined
      ? []
      : [{ entryPointVersion: v, entryPoint: getAddress(CANONICAL_ENTRY_POINTS[v]), paymaster }];
  });
  return [...v06, ...later];
}

/** Where the signer's key lives (signerSettings.ts). */
export type { SignerSetting };

export interface ChainSettings {
  readonly devChain: boolean;
  /** The dev chain as a fork of a JSON-RPC endpoint (PATRON_DEV_CHAIN_FORK_*), or undefined: a fresh chain. */
  readonly devChainFork: DevChainForkSettings | undefined;
  readonly chains: readonly ChainSetting[];
  readonly signer: SignerSetting;
  /** How often token prices and metadata are refreshed in the background (PATRON_PRICE_REFRESH_SECONDS). */
  readonly priceRefreshSeconds: number;
  /** How often each paymaster is asked whether it still accepts the signer (PATRON_SIGNER_CHECK_MS). */
  readonly signerCheckMs: number;
  readonly sponsorship: {
    readonly defaultExpirySeconds: number;
    readonly maxExpirySeconds: number;
    readonly validAfterSkewSeconds: number;
    /** The EIP-7702 delegates Patron sponsors (PATRON_EIP7702_DELEGATES; config/eip7702Delegates.ts). */
    readonly eip7702Delegates: readonly Address[];
  };
  /** The deployment's signing bounds (PATRON_BOUND_*); chains and dApps may override them. */
  readonly bounds: SigningBounds;
  /** How often a chain's base fee and tip are read at most (a block or so), and how old they may get. */
  readonly fees: { readonly refreshMs: number; readonly maxAgeMs: number };
}

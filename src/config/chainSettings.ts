import { getAddress } from 'viem';
import { z } from 'zod';

/**
 * Chains, the paymaster signer and the sponsorship window, from the environment (part of loadConfig).
 * Real chains come as JSON in PATRON_CHAINS; the embedded dev chain (EDR, chain 31337) is on by default
 * outside production.
 */
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const CANONICAL_ENTRY_POINT_V06 = '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789';

const chainEntry = z.object(
  {
    chainId: z
      .number({ error: 'chainId must be a number' })
      .int()
      .positive({ error: 'chainId must be a positive integer' }),
    rpcUrl: z.string({ error: 'rpcUrl must be a string' }).refine((v) => /^https?:\/\//.test(v) && URL.canParse(v), {
      error: 'rpcUrl must be an http(s) URL',
    }),
    paymaster: z
      .string({ error: 'paymaster must be an address' })
      .regex(ADDRESS, { error: 'paymaster must be an address' })
      .transform((v) => getAddress(v.toLowerCase())),
    entryPoint: z
      .string()
      .regex(ADDRESS, { error: 'entryPoint must be an address' })
      .default(CANONICAL_ENTRY_POINT_V06)
      .transform((v) => getAddress(v.toLowerCase())),
  },
  { error: 'each chain must be an object {chainId, rpcUrl, paymaster, entryPoint?}' },
);

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
      ctx.addIssue({
        code: 'custom',
        message: `PATRON_CHAINS[${String(issue?.path[0] ?? '')}]: ${issue?.message ?? 'invalid'}`,
      });
      return z.NEVER;
    }
    const ids = r.data.map((c) => c.chainId);
    if (new Set(ids).size !== ids.length) {
      ctx.addIssue({ code: 'custom', message: 'PATRON_CHAINS names a chain id twice' });
      return z.NEVER;
    }
    return r.data;
  });

export type ChainSetting = z.infer<typeof chainEntry>;

export type SignerSetting =
  | { readonly kind: 'privateKey'; readonly privateKeyHex: string }
  | { readonly kind: 'keystore'; readonly file: string; readonly password: string }
  | { readonly kind: 'dataDir'; readonly dataDir: string };

export interface ChainSettings {
  readonly devChain: boolean;
  readonly chains: readonly ChainSetting[];
  readonly signer: SignerSetting;
  readonly sponsorship: {
    readonly defaultExpirySeconds: number;
    readonly maxExpirySeconds: number;
    readonly validAfterSkewSeconds: number;
  };
}

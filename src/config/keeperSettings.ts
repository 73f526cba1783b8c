import { type Address, getAddress } from 'viem';
import { z } from 'zod';
import { closedObject, issueText } from './closedObject.js';
import { integerFromEnv } from './envValues.js';
import { type SignerSetting, signerFromEnv } from './signerSettings.js';

/**
 * The deposit keeper's settings (src/keeper/README.md, docs/guides/operations.md "Deposit keeper"), from the
 * environment (part of loadConfig, the only reader of process.env). Off unless PATRON_KEEPER lists a paymaster: a
 * keeper spends the operator's money, so nothing is topped up that was not asked for, paymaster by paymaster.
 */
export type KeeperMode = 'send' | 'dryRun' | 'propose';

export interface KeeperPaymasterSetting {
  readonly chainId: number;
  readonly paymaster: Address;
  /** `send`: depositTo from the funding key; `dryRun`: record and alert only; `propose`: a Safe transaction to sign. */
  readonly mode: KeeperMode;
  /** What a top-up brings the deposit back to. */
  readonly targetWei: bigint;
  /** Sent over any 24 h (rolling, counted from the ledger of top-ups): the most the keeper spends. */
  readonly dailyLimitWei: bigint;
  /** The mark is never below this. */
  readonly minimumWei: bigint;
  /** Added to the mark; undefined: the solvency guard's floor of the chain. */
  readonly floorWei: bigint | undefined;
  /** Liabilities × this (basis points); undefined: the solvency guard's margin. */
  readonly marginBps: bigint | undefined;
  /** The spend rate × this is added to the mark: the time a top-up must last before the next one. */
  readonly leadTimeSeconds: number;
}

export interface KeeperSettings {
  /** The paymasters the keeper looks after; empty: it is off. */
  readonly paymasters: readonly KeeperPaymasterSetting[];
  readonly intervalMs: number;
  /** Left in the funding key for gas: a top-up sends at most its balance minus this. */
  readonly gasReserveWei: bigint;
  /** The `funder_low` alert: the funder holds less than this many top-ups (target − mark each) and the reserve. */
  readonly lowFunderTopups: number;
  /** The funding key; undefined when no paymaster sends (only `propose`), never the paymaster signer's by default. */
  readonly funder: SignerSetting | undefined;
}

/** 6 hours: a top-up lasts a night at the observed spend rate before the deposit is back at the mark. */
const DEFAULT_LEAD_TIME_SECONDS = 21_600;
/** 0.005 ETH: a depositTo costs ~30,000 gas; this pays it at 150 gwei. */
const DEFAULT_GAS_RESERVE_WEI = 5n * 10n ** 15n;

const weiText = (what: string) =>
  z
    .string({ error: `${what} must be a decimal string of wei` })
    .regex(/^\d{1,40}$/, { error: `${what} must be a decimal string of wei` })
    .transform((v) => BigInt(v));

const entry = closedObject(
  {
    chainId: z.number({ error: 'chainId must be a number' }).int().positive(),
    paymaster: z
      .string({ error: 'paymaster must be an address' })
      .regex(/^0x[0-9a-fA-F]{40}$/, { error: 'paymaster must be an address' })
      .transform((v) => getAddress(v.toLowerCase())),
    mode: z.enum(['send', 'dryRun', 'propose'], { error: 'mode must be one of "send", "dryRun", "propose"' }),
    targetWei: weiText('targetWei').refine((v) => v > 0n, { error: 'targetWei must be above 0' }),
    dailyLimitWei: weiText('dailyLimitWei').refine((v) => v > 0n, { error: 'dailyLimitWei must be above 0' }),
    minimumWei: weiText('minimumWei').optional(),
    floorWei: weiText('floorWei').optional(),
    margin: z
      .string({ error: 'margin must be a decimal string such as "1.5"' })
      .regex(/^\d{1,3}(\.\d{1,4})?$/, { error: 'margin must be a number of at least 1 with at most 4 decimals' })
      .refine((v) => Number(v) >= 1, { error: 'margin must be a number of at least 1 with at most 4 decimals' })
      .optional(),
    leadTimeSeconds: z
      .number({ error: 'leadTimeSeconds must be a number of seconds' })
      .int()
      .min(0)
      .max(30 * 86_400)
      .optional(),
  },
  {
    notObject:
      'PATRON_KEEPER entries must be objects {chainId, paymaster, mode, targetWei, dailyLimitWei, minimumWei?, floorWei?, margin?, leadTimeSeconds?}',
  },
);

/** "1.5" → 15000 basis points. */
const bps = (margin: string): bigint => {
  const [whole = '1', fraction = ''] = margin.split('.');
  return BigInt(whole) * 10_000n + BigInt(fraction.padEnd(4, '0'));
};

const keeperList = z
  .string()
  .optional()
  .transform((v, ctx): KeeperPaymasterSetting[] => {
    if (v === undefined || v.trim() === '') return [];
    let json: unknown;
    try {
      json = JSON.parse(v);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'PATRON_KEEPER must be a JSON array of {chainId, paymaster, mode, …}' });
      return z.NEVER;
    }
    const r = z.array(entry, { error: 'PATRON_KEEPER must be a JSON array' }).safeParse(json);
    if (!r.success) {
      const issue = r.error.issues[0];
      ctx.addIssue({
        code: 'custom',
        message: issue === undefined ? 'PATRON_KEEPER is invalid' : issueText({ root: 'PATRON_KEEPER', issue }),
      });
      return z.NEVER;
    }
    const seen = new Set<string>();
    const out: KeeperPaymasterSetting[] = [];
    for (const [i, e] of r.data.entries()) {
      const key = `${e.chainId}:${e.paymaster}`;
      const minimumWei = e.minimumWei ?? 0n;
      const problem = seen.has(key)
        ? `paymaster ${e.paymaster} on chain ${e.chainId} is listed twice`
        : minimumWei >= e.targetWei
          ? 'targetWei must be above minimumWei (a top-up brings the deposit above the mark)'
          : undefined;
      if (problem !== undefined) {
        ctx.addIssue({ code: 'custom', message: `PATRON_KEEPER[${i}]: ${problem}` });
        return z.NEVER;
      }
      seen.add(key);
      out.push(
        Object.freeze({
          chainId: e.chainId,
          paymaster: e.paymaster,
          mode: e.mode,
          targetWei: e.targetWei,
          dailyLimitWei: e.dailyLimitWei,
          minimumWei,
          floorWei: e.floorWei,
          marginBps: e.margin === undefined ? undefined : bps(e.margin),
          leadTimeSeconds: e.leadTimeSeconds ?? DEFAULT_LEAD_TIME_SECONDS,
        }),
      );
    }
    return out;
  });

export const keeperEnv = {
  PATRON_KEEPER: keeperList,
  PATRON_KEEPER_INTERVAL_SECONDS: integerFromEnv('PATRON_KEEPER_INTERVAL_SECONDS', 5, 86_400),
  PATRON_KEEPER_GAS_RESERVE_WEI: z
    .string()
    .optional()
    .refine((v) => v === undefined || v === '' || /^\d{1,40}$/.test(v), {
      error: 'PATRON_KEEPER_GAS_RESERVE_WEI must be a decimal number of wei',
    }),
  PATRON_KEEPER_LOW_FUNDER_TOPUPS: integerFromEnv('PATRON_KEEPER_LOW_FUNDER_TOPUPS', 0, 1000),
};

type KeeperEnv = z.infer<z.ZodObject<typeof keeperEnv>>;

/**
 * The funding key's own settings, each the paymaster signer's (signerSettings.ts) under the PATRON_KEEPER_FUNDER_
 * prefix, read by the same parser: every back end the signer has, and none of its defaults (no key generated into
 * the data directory, no PKCS#11 key label taken for granted, which would name the signer's own key).
 */
const FUNDER_NAMES = {
  PATRON_KEEPER_FUNDER_PRIVATE_KEY: 'PATRON_SIGNER_PRIVATE_KEY',
  PATRON_KEEPER_FUNDER_KEYSTORE: 'PATRON_SIGNER_KEYSTORE',
  PATRON_KEEPER_FUNDER_KEYSTORE_PASSWORD: 'PATRON_SIGNER_KEYSTORE_PASSWORD',
  PATRON_KEEPER_FUNDER_PKCS11_MODULE: 'PATRON_SIGNER_PKCS11_MODULE',
  PATRON_KEEPER_FUNDER_PKCS11_TOKEN_LABEL: 'PATRON_SIGNER_PKCS11_TOKEN_LABEL',
  PATRON_KEEPER_FUNDER_PKCS11_PIN: 'PATRON_SIGNER_PKCS11_PIN',
  PATRON_KEEPER_FUNDER_PKCS11_PIN_FILE: 'PATRON_SIGNER_PKCS11_PIN_FILE',
  PATRON_KEEPER_FUNDER_PKCS11_KEY_LABEL: 'PATRON_SIGNER_PKCS11_KEY_LABEL',
  PATRON_KEEPER_FUNDER_KMS_KEY_ID: 'PATRON_SIGNER_KMS_KEY_ID',
  PATRON_KEEPER_FUNDER_KMS_REGION: 'PATRON_SIGNER_KMS_REGION',
  PATRON_KEEPER_FUNDER_KMS_ENDPOINT: 'PATRON_SIGNER_KMS_ENDPOINT',
} as const;

function funderFromEnv(env: Readonly<Record<string, string | undefined>>): {
  funder: SignerSetting | undefined;
  problems: string[];
} {
  const mapped: Record<string, string | undefined> = {};
  for (const [own, signer] of Object.entries(FUNDER_NAMES)) mapped[signer] = env[own];
  const rename = (p: string) => p.replaceAll('PATRON_SIGNER_', 'PATRON_KEEPER_FUNDER_');
  const { signer, problems } = signerFromEnv({ env: mapped, production: false, dataDir: '' });
  if (problems.length > 0) return { funder: undefined, problems: problems.map(rename) };
  if (signer?.kind === 'pkcs11' && (env.PATRON_KEEPER_FUNDER_PKCS11_KEY_LABEL ?? '') === '') {
    // The signer's default label would find the paymaster signer's key on a shared token.
    return {
      funder: undefined,
      problems: ['PATRON_KEEPER_FUNDER_PKCS11_KEY_LABEL is required with PATRON_KEEPER_FUNDER_PKCS11_MODULE'],
    };
  }
  return { funder: signer?.kind === 'dataDir' ? undefined : signer, problems: [] };
}

export function keeperSettingsFrom(
  e: KeeperEnv,
  env: Readonly<Record<string, string | undefined>>,
): { settings: KeeperSettings; problems: string[] } {
  const { funder, problems } = funderFromEnv(env);
  const paymasters = e.PATRON_KEEPER ?? [];
  const spending = paymasters.filter((p) => p.mode !== 'propose');
  if (spending.length > 0 && funder === undefined && problems.length === 0) {
    problems.push(
      `PATRON_KEEPER: ${spending[0]?.paymaster} on chain ${spending[0]?.chainId} has mode "${spending[0]?.mode}", which needs a funding key: PATRON_KEEPER_FUNDER_KEYSTORE, PATRON_KEEPER_FUNDER_PKCS11_MODULE, PATRON_KEEPER_FUNDER_KMS_KEY_ID or PATRON_KEEPER_FUNDER_PRIVATE_KEY`,
    );
  }
  const reserve = e.PATRON_KEEPER_GAS_RESERVE_WEI;
  return {
    settings: Object.freeze({
      paymasters,
      intervalMs: (e.PATRON_KEEPER_INTERVAL_SECONDS ?? 60) * 1000,
      gasReserveWei: reserve === undefined || reserve === '' ? DEFAULT_GAS_RESERVE_WEI : BigInt(reserve),
      lowFunderTopups: e.PATRON_KEEPER_LOW_FUNDER_TOPUPS ?? 3,
      funder,
    }),
    problems,
  };
}

/** The keeper off: what tests and the CLI start with. */
export const KEEPER_OFF: KeeperSettings = Object.freeze({
  paymasters: [],
  intervalMs: 60_000,
  gasReserveWei: DEFAULT_GAS_RESERVE_WEI,
  lowFunderTopups: 3,
  funder: undefined,
});

import { getAddress, type Hex } from 'viem';
import { z } from 'zod';
import { closedErrors, closedObject } from './closedObject.js';

/**
 * The smart-account kinds whose calls a sponsorship policy's contract allowlist can check (docs/guides/policies.md, "How policies
 * are enforced"). A call rule matches only when Patron knows which kind the sender is: each kind names the calldata
 * layouts its accounts execute (policies/accountCalls.ts), and an account is of a kind when its implementation (or
 * EIP-7702 delegate, or factory when not deployed yet) is one Patron knows for it (policies/knownAccounts.ts).
 * - simpleAccountV06, simpleAccountV07: eth-infinitism's SimpleAccount of those releases;
 * - simpleAccountV08: SimpleAccount v0.8 and Simple7702Account v0.8/v0.9 (BaseAccount's execute and executeBatch);
 * - safe4337: a Safe whose fallback handler is Safe's ERC-4337 module;
 * - kernelV2, kernelV3: ZeroDev Kernel 0.2.x (execute with an operation) and 0.3.x (ERC-7579);
 * - nexusV12, nexusV13: Biconomy Nexus 1.2.0 and the 1.3 line (ERC-7579 `execute`; `executeComposable` of
 *   composability 1.0.0 and 1.1.0 respectively, whose selectors differ);
 * - lightAccount, biconomyV2, coinbaseSmartWallet; erc7579: any other ERC-7579 account an operator lists.
 */
export const ACCOUNT_KINDS = [
  'simpleAccountV06',
  'simpleAccountV07',
  'simpleAccountV08',
  'safe4337',
  'kernelV2',
  'kernelV3',
  'nexusV12',
  'nexusV13',
  'lightAccount',
  'biconomyV2',
  'coinbaseSmartWallet',
  'erc7579',
] as const;
export type AccountKind = (typeof ACCOUNT_KINDS)[number];

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HASH = /^0x[0-9a-fA-F]{64}$/;

const addresses = (what: string) =>
  z
    .array(
      z
        .string({ error: `${what} must be addresses` })
        .regex(ADDRESS, { error: `${what} must be addresses` })
        .transform((v) => getAddress(v.toLowerCase())),
      { error: `${what} must be an array of addresses` },
    )
    .max(1000, { error: `${what} may list at most 1000` });

const hashes = (what: string) =>
  z
    .array(
      z
        .string({ error: `${what} must be 32-byte hex hashes` })
        .regex(HASH, { error: `${what} must be 32-byte hex hashes` })
        .transform((v) => v.toLowerCase() as Hex),
      { error: `${what} must be an array of hashes` },
    )
    .max(1000, { error: `${what} may list at most 1000` });

const kindSchema = closedObject(
  {
    implementations: addresses('implementations').optional(),
    factories: addresses('factories').optional(),
    proxyCodeHashes: hashes('proxyCodeHashes').optional(),
    codeHashes: hashes('codeHashes').optional(),
    modules: addresses('modules').optional(),
    bootstraps: addresses('bootstraps').optional(),
  },
  {
    notObject:
      'each account kind must be an object {implementations?, factories?, proxyCodeHashes?, codeHashes?, modules?, bootstraps?}',
  },
);

/**
 * `PATRON_CHAINS[i].accounts`: account implementations and factories this chain has beyond the canonical ones
 * Patron ships (chain/canonicalAccounts.ts), per kind: `{"lightAccount": {"implementations": ["0x…"],
 * "factories": ["0x…"], "proxyCodeHashes": ["0x…"]}}`. An address or code hash may belong to one kind only.
 */
export const knownAccountsSchema = z
  .partialRecord(
    z.enum(ACCOUNT_KINDS, { error: `accounts keys must be one of ${ACCOUNT_KINDS.join(', ')}` }),
    kindSchema,
    {
      error: closedErrors({
        known: ACCOUNT_KINDS,
        notObject: `accounts must be an object whose keys are account kinds (${ACCOUNT_KINDS.join(', ')})`,
      }),
    },
  )
  .superRefine((accounts, ctx) => {
    // One kind per implementation, factory or account code hash: the kind picks the decoder. A proxy's code hash
    // may serve several kinds of one slot style (Solady's ERC-1967 proxy serves Kernel, Light Account, Coinbase).
    const owner = new Map<string, string>();
    const proxyStyle = new Map<string, string>();
    for (const [kind, lists] of Object.entries(accounts)) {
      if (lists === undefined) continue;
      if (lists.modules !== undefined && kind !== 'safe4337') {
        ctx.addIssue({ code: 'custom', path: [kind, 'modules'], message: 'modules are for safe4337 only' });
      }
      if (lists.bootstraps !== undefined && kind !== 'nexusV12' && kind !== 'nexusV13') {
        ctx.addIssue({
          code: 'custom',
          path: [kind, 'bootstraps'],
          message: 'bootstraps are for nexusV12 and nexusV13 only',
        });
      }
      for (const field of ['implementations', 'factories', 'codeHashes'] as const) {
        for (const value of lists[field] ?? []) {
          const seen = owner.get(value.toLowerCase());
          if (seen !== undefined && seen !== kind) {
            ctx.addIssue({ code: 'custom', path: [kind, field], message: `${value} is listed for ${seen} too` });
          }
          owner.set(value.toLowerCase(), kind);
        }
      }
      for (const hash of lists.proxyCodeHashes ?? []) {
        const style = proxySlotOf(kind as AccountKind);
        const seen = proxyStyle.get(hash);
        if (seen !== undefined && seen !== style) {
          ctx.addIssue({
            code: 'custom',
            path: [kind, 'proxyCodeHashes'],
            message: `${hash} is listed for a kind whose proxies keep their implementation elsewhere`,
          });
        }
        proxyStyle.set(hash, style);
      }
    }
    for (const [kind, lists] of Object.entries(accounts)) {
      for (const hash of lists?.codeHashes ?? []) {
        if (proxyStyle.has(hash)) {
          ctx.addIssue({ code: 'custom', path: [kind, 'codeHashes'], message: `${hash} is listed as a proxy too` });
        }
      }
    }
  });

/**
 * What Patron knows of one kind on a chain, every list optional: `implementations` (what a proxy's slot names, or an
 * EIP-7702 delegate; for safe4337 the Safe singletons), `factories` (the first 20 bytes of an undeployed sender's
 * initCode), `proxyCodeHashes` (runtime code hashes of the kind's proxies, whose implementation is read from the
 * kind's slot), `codeHashes` (accounts deployed without a proxy), `modules` (safe4337 only: the 4337 modules a Safe's
 * fallback handler must be), `bootstraps` (Nexus only: what an undeployed account's factory data may name as the
 * bootstrap it delegatecalls while it initialises).
 */
export type KnownAccountKind = z.output<typeof kindSchema>;
export type KnownAccountsSetting = Readonly<z.output<typeof knownAccountsSchema>>;

/**
 * Where a kind's proxy keeps its implementation: the ERC-1967 slot (most), Safe's singleton in slot 0, or
 * Biconomy Smart Account v2's proxy, which keeps it at the slot numbered by its own address.
 */
export type ProxySlot = 'erc1967' | 'safe' | 'biconomy';

export function proxySlotOf(kind: AccountKind): ProxySlot {
  if (kind === 'safe4337') return 'safe';
  if (kind === 'biconomyV2') return 'biconomy';
  return 'erc1967';
}

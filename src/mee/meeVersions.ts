import type { Address } from 'viem';
import type { AccountKind } from '../config/knownAccountsSettings.js';

/**
 * The MEE versions a gas tank may be pinned to: each is a Nexus line (its kind in policies/accountCalls.ts decodes the
 * payment op's call) and the K1 MEE validator its nonce keys name. From @biconomy/abstractjs 1.2.3
 * `DEFAULT_CONFIGURATIONS_BY_MEE_VERSION` (`validatorAddress`), held equal to it by src/mee/meeVersions.test.ts; the
 * same addresses on every chain. MEE 1.x (Nexus 1.0.2) is not offered: its composability is a fallback module.
 */
export const MEE_VERSIONS = {
  '2.0.0': { kind: 'nexusV12', validator: '0x00000000d12897DDAdC2044614A9677B191A2d95' },
  '2.1.0': { kind: 'nexusV12', validator: '0x0000000031ef4155C978d48a8A7d4EDba03b04fE' },
  '2.2.1': { kind: 'nexusV13', validator: '0x0000000002d3cC5642A748B6783F32C032616E03' },
  '2.3.0': { kind: 'nexusV13', validator: '0x1Cdae7dcc3f32551865EfE3d77AC2b88Ee2905B4' },
  '3.0.0': { kind: 'nexusV13', validator: '0x5e2181ccC1550f5e86F14298A12a7a9A04536F58' },
} as const satisfies Record<string, { readonly kind: AccountKind; readonly validator: Address }>;

export type MeeVersion = keyof typeof MEE_VERSIONS;

export const isMeeVersion = (v: string): v is MeeVersion => Object.hasOwn(MEE_VERSIONS, v);

/**
 * A tank's 2D-nonce key for one lane: lane (3 bytes) ‖ validation mode 0x00 (1) ‖ the validator (20), the layout
 * Nexus reads its validator from (bcnmy/nexus `NonceLib`) and Biconomy's sponsorship starter kit builds.
 */
export function meeNonceKey(args: { readonly lane: number; readonly validator: Address }): bigint {
  return (BigInt(args.lane) << 168n) | BigInt(args.validator);
}

/** The lane a nonce's key names (its top 3 bytes), and whether the rest of the key is the version's validator. */
export function laneOfNonce(args: { readonly nonce: bigint; readonly validator: Address }): number | undefined {
  const key = args.nonce >> 64n;
  const lane = Number(key >> 168n);
  return meeNonceKey({ lane, validator: args.validator }) === key ? lane : undefined;
}

/**
 * The MEE versions a gas tank may be pinned to, as the CLI offers them: the table above, each of which the installed
 * abstractjs (1.2.3) has, held equal by test/mee.versions.test.ts. 1.0.0 and 1.1.0 (Nexus 1.0.2) are left out: their
 * accounts need the validator installed explicitly, which a tank created by its address alone does not have.
 */
export const TANK_MEE_VERSIONS: readonly string[] = Object.keys(MEE_VERSIONS).sort();

import assert from 'node:assert/strict';
import {
  type Address,
  BaseError,
  concat,
  decodeErrorResult,
  encodeFunctionData,
  type Hex,
  pad,
  parseAbi,
  toHex,
} from 'viem';
import { entryPoint06Abi, entryPoint07Abi, toPackedUserOperation, type UserOperation } from 'viem/account-abstraction';
import type { DevClient } from '../../src/chain/devClient.js';
import type { EntryPointVersion } from '../../src/chain/entryPoints.js';
import { MODE_TOKEN } from '../../src/paymaster/entryPoints/paymasterModes.js';
import { decodePaymasterAndData } from '../../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { decodePaymasterAndDataV07 } from '../../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import type { RpcFixture } from './rpcFixture.js';
import type { Tenant } from './testContext.js';
import type { AttackerAccount } from './tokenAttacker.js';

/**
 * What the token-mode attacker (tokenAttacker.ts) does with Patron and the EntryPoint: asks for the token mode's
 * final data with the dApp's public API key (the Biconomy dialect on v0.6, the ERC-7677 `{ token }` context on
 * v0.7+), signs the op with its account, and submits it with its own bundler as beneficiary.
 */

/** The EntryPoint versions the attack is played on. */
export const ATTACK_VERSIONS = ['0.6', '0.7', '0.8', '0.9'] as const satisfies readonly EntryPointVersion[];

/** Patron simulates at a gas price of 0 or 1 wei: the Drainer's trigger per version (tokenAttacker.ts). */
export const SIMULATION_TRIGGER: Readonly<Record<EntryPointVersion, bigint>> = {
  '0.6': 1_000_000n,
  '0.7': 1_000_000n,
  '0.8': 1_000_000n,
  '0.9': 100n,
};

/**
 * The most call gas the signing bounds admit on v0.7+ (the unused-gas penalty bound, 100,000 gas, is reached at ~1M);
 * the 8M is refused at signing now (test/signingBounds.gas.test.ts), so the attack burns what it may.
 */
export const ATTACK_CALL_GAS = 900_000n;

/** The version's paymaster deposit at its EntryPoint: what the attack would make the paymaster pay from. */
export const paymasterDeposit = (app: RpcFixture, version: EntryPointVersion) =>
  app.fx.client.readContract({
    address: app.fx.entryPoints[version],
    abi: entryPoint06Abi,
    functionName: 'balanceOf',
    args: [app.fx.paymasters[version]],
  });

/** The attacker's fees: 2 gwei, 1 gwei tip (inside the signing bounds on the dev chain). */
export const ATTACK_FEES = { maxFeePerGas: 2_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };

export interface Limits {
  readonly callGasLimit: bigint;
  readonly verificationGasLimit: bigint;
  readonly preVerificationGas: bigint;
}

/** The signed token fields, from the answer's paymaster data. */
export interface SignedFields {
  /** Mode 2 (the dApp's guarantee), else mode 1 (prefunded). */
  readonly guaranteed: boolean;
  readonly maxTokenCost: bigint;
  readonly exchangeRate: bigint;
  readonly priceMarkup: number;
}

const FAILED = parseAbi([
  'error FailedOp(uint256 opIndex, string reason)',
  'error FailedOpWithRevert(uint256 opIndex, string reason, bytes inner)',
]);

const q = (v: unknown) => BigInt(String(v));

/** Wei in token units at the signed price, rounded up: what a charge must reach to cover `wei`. */
export const inToken = (wei: bigint, f: SignedFields) =>
  (wei * f.exchangeRate * BigInt(f.priceMarkup) + 10n ** 24n - 1n) / 10n ** 24n;

async function post(app: RpcFixture, url: string, method: string, params: unknown[]) {
  const res = await app.ctx.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return res.json() as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };
}

const fieldsOf = (d: {
  readonly guaranteed?: boolean | undefined;
  readonly maxTokenCost: bigint;
  readonly exchangeRate: bigint;
  readonly priceMarkup: number;
}): SignedFields => ({
  guaranteed: d.guaranteed === true,
  maxTokenCost: d.maxTokenCost,
  exchangeRate: d.exchangeRate,
  priceMarkup: d.priceMarkup,
});

/**
 * The token mode's final data for the account's call. Without `limits` Patron computes them (the attacker's
 * estimate); with them, it signs over the attacker's own. An answer with an error returns it instead of an op.
 */
export async function requestTokenData(args: {
  readonly app: RpcFixture;
  readonly token: Address;
  readonly version: EntryPointVersion;
  readonly tenant: Tenant;
  readonly a: AttackerAccount;
  readonly callData: Hex;
  readonly limits?: Limits;
}) {
  const { app, version, a } = args;
  const chainId = app.fx.chain.chainId;
  const base = {
    sender: a.sender,
    nonce: await a.account.getNonce(),
    callData: args.callData,
    ...ATTACK_FEES,
    signature: await a.account.getStubSignature(),
  };
  const limits = args.limits ?? { callGasLimit: 0n, verificationGasLimit: 0n, preVerificationGas: 0n };
  const calculate = args.limits === undefined;
  const wire = (op: Record<string, unknown>, num: (v: bigint) => string) =>
    Object.fromEntries(Object.entries(op).map(([k, v]) => [k, typeof v === 'bigint' ? num(v) : v]));
  const answer =
    version === '0.6'
      ? await post(app, `/api/v1/${chainId}/${args.tenant.apiKey}`, 'pm_sponsorUserOperation', [
          wire({ ...base, ...limits, initCode: '0x' }, (v) => v.toString()),
          { mode: 'ERC20', calculateGasLimits: calculate, tokenInfo: { feeTokenAddress: args.token } },
        ])
      : await post(app, `/api/v2/${chainId}/${args.tenant.apiKey}`, 'pm_getPaymasterData', [
          wire({ ...base, ...limits }, toHex),
          app.fx.entryPoints[version],
          toHex(chainId),
          { token: args.token, ...(calculate ? { calculateGasLimits: true } : {}) },
        ]);
  if (answer.result === undefined) return { error: answer.error };
  const r = answer.result;
  const signedLimits: Limits = calculate
    ? {
        callGasLimit: q(r.callGasLimit),
        verificationGasLimit: q(r.verificationGasLimit),
        preVerificationGas: q(r.preVerificationGas),
      }
    : limits;
  if (version === '0.6') {
    const paymasterAndData = r.paymasterAndData as Hex;
    const d = decodePaymasterAndData(paymasterAndData);
    assert.ok(d.mode === MODE_TOKEN, 'a token-mode signature');
    const op = { ...base, ...signedLimits, initCode: '0x' as Hex, paymasterAndData };
    return { op, fields: fieldsOf(d), limits: signedLimits };
  }
  const paymaster = r.paymaster as Address;
  const paymasterData = r.paymasterData as Hex;
  const d = decodePaymasterAndDataV07(concat([paymaster, pad('0x', { size: 32 }), paymasterData])).fields;
  assert.ok(d.mode === MODE_TOKEN, 'a token-mode signature');
  const op = {
    ...base,
    ...signedLimits,
    paymaster,
    paymasterData,
    paymasterVerificationGasLimit: q(r.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: q(r.paymasterPostOpGasLimit),
  };
  return { op, fields: fieldsOf(d), limits: signedLimits };
}

export type SignedOp = NonNullable<Awaited<ReturnType<typeof requestTokenData>>['op']>;

interface Submission {
  readonly app: RpcFixture;
  readonly version: EntryPointVersion;
  /** The attacker's bundler, beneficiary of its own bundle. */
  readonly bundler: DevClient;
  readonly a: AttackerAccount;
  readonly op: SignedOp;
}

/** The account's signature over the op and handleOps' calldata, the bundler as beneficiary. */
async function handleOpsData(s: Submission) {
  const beneficiary = s.bundler.account.address;
  const signature = await s.a.account.signUserOperation({ ...s.op, chainId: s.app.fx.chain.chainId } as Parameters<
    AttackerAccount['account']['signUserOperation']
  >[0]);
  if (s.version === '0.6') {
    const v06 = { ...(s.op as SignedOp & { initCode: Hex; paymasterAndData: Hex }), signature };
    return encodeFunctionData({ abi: entryPoint06Abi, functionName: 'handleOps', args: [[v06], beneficiary] });
  }
  const packed = toPackedUserOperation({ ...s.op, signature } as UserOperation<'0.7'>);
  return encodeFunctionData({ abi: entryPoint07Abi, functionName: 'handleOps', args: [[packed], beneficiary] });
}

/** The bundler submits the op at the chain's gas price (far above Patron's simulation's), gas fixed so it is mined. */
export async function submitAttack(s: Submission) {
  const hash = await s.bundler.sendTransaction({
    to: s.app.fx.entryPoints[s.version],
    data: await handleOpsData(s),
    gas: 15_000_000n,
  });
  const receipt = await s.app.fx.client.waitForTransactionReceipt({ hash });
  const tx = await s.app.fx.client.getTransaction({ hash });
  return { receipt, gasPrice: tx.gasPrice ?? 0n };
}

/** What a bundler's simulation of handleOps says: the FailedOp reason, or 'ok'. */
export async function failedOpReason(s: Submission): Promise<string> {
  const data = await handleOpsData(s);
  try {
    await s.app.fx.client.call({ account: s.bundler.account.address, to: s.app.fx.entryPoints[s.version], data });
  } catch (err) {
    const raw = err instanceof BaseError ? err.walk((e) => typeof (e as { data?: unknown }).data === 'string') : null;
    const revert = (raw as { data?: Hex } | null)?.data;
    assert.ok(revert !== undefined, String(err));
    return String(decodeErrorResult({ abi: FAILED, data: revert }).args[1]);
  }
  return 'ok';
}

/**
 * The EntryPoint's prefund for the op, the most it can take from the paymaster's deposit (v0.6 counts
 * verificationGasLimit three times when a paymaster pays; v0.7+ adds the paymaster's two limits).
 */
export function entryPointPrefund(version: EntryPointVersion, op: SignedOp): bigint {
  const gas = op.callGasLimit + op.preVerificationGas;
  if (version === '0.6') return (gas + 3n * op.verificationGasLimit) * op.maxFeePerGas;
  const pm = op as SignedOp & { paymasterVerificationGasLimit: bigint; paymasterPostOpGasLimit: bigint };
  return (
    (gas + op.verificationGasLimit + pm.paymasterVerificationGasLimit + pm.paymasterPostOpGasLimit) * op.maxFeePerGas
  );
}

import { concat, getAddress, type Hex, numberToHex } from 'viem';
import type { EntryPointVersion } from '../src/chain/chainRegistry.js';
import { decodePaymasterAndData } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { decodePaymasterAndDataV07 } from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { type RecordedRpc, type SdkE2eV07, userOperationEvent } from '../test/helpers/sdkE2eV07.js';
import type { SentOp } from './sdkFlow.js';

/**
 * One op's times, read from the JSON-RPC calls the SDK made (test/helpers/sdkE2eV07.ts records each with the wall
 * clock at send and at answer) and from the chain:
 * - t0: Patron's answer to the last signing call before the op was sent (the signature the op carries);
 * - t1: the SDK's eth_sendUserOperation leaving for alto;
 * - t2: the receipt back in the SDK's hands, and the including block's timestamp.
 */
export interface OpTiming {
  readonly t0: number;
  readonly t1: number;
  readonly t2: number;
  /** Unix seconds of the block that included the op. */
  readonly blockTimestamp: number;
  /** The window Patron signed (unix seconds), read from the op as sent to the bundler. */
  readonly validUntil: number;
  /** The expiry the signing call asked for (`expiryDuration` or Pimlico's `validForSeconds`), if any. */
  readonly askedSeconds: number | undefined;
  /** The signing calls made for this op, in order (a signature never submitted holds its budget until it expires). */
  readonly signingCalls: readonly string[];
  /** The bundler and paymaster calls between the signature and the send, as `target:method`. */
  readonly between: readonly string[];
}

/** A Patron answer that carries a signature: paymaster data that is final (an ERC-7677 stub is not). */
function isSigning(call: RecordedRpc): boolean {
  if (call.target !== 'patron' || call.method === 'pm_getPaymasterStubData' || call.status !== 200) return false;
  const result = (call.response as { result?: Record<string, unknown> } | undefined)?.result;
  return result !== undefined && ('paymasterAndData' in result || 'paymasterData' in result);
}

/** The expiry a request asked for: Biconomy's `expiryDuration` or Pimlico's `validForSeconds`, wherever it sits. */
function askedSeconds(params: readonly unknown[]): number | undefined {
  for (const p of params.slice(1)) {
    if (typeof p !== 'object' || p === null) continue;
    const { expiryDuration, validForSeconds } = p as { expiryDuration?: unknown; validForSeconds?: unknown };
    const asked = expiryDuration ?? validForSeconds;
    if (typeof asked === 'number') return asked;
  }
  return undefined;
}

/** validUntil of the paymaster fields of an op as a bundler receives it (v0.6 packed, v0.7+ split and in hex). */
function validUntilOf(op: Record<string, unknown>, version: EntryPointVersion): number {
  if (version === '0.6') return decodePaymasterAndData(op.paymasterAndData as Hex).validUntil;
  const paymasterAndData = concat([
    getAddress(String(op.paymaster)),
    numberToHex(BigInt(String(op.paymasterVerificationGasLimit)), { size: 16 }),
    numberToHex(BigInt(String(op.paymasterPostOpGasLimit)), { size: 16 }),
    op.paymasterData as Hex,
  ]);
  return decodePaymasterAndDataV07(paymasterAndData).validUntil;
}

/**
 * The op's timing from the calls recorded since `from`, once its receipt came back at `t2`. The op must have
 * executed, paid by Patron's paymaster for its EntryPoint: a number for an op that did not happen is not reported.
 */
export async function opTiming(args: {
  readonly x: SdkE2eV07;
  readonly version: EntryPointVersion;
  readonly from: number;
  readonly op: SentOp;
  readonly t2: number;
}): Promise<OpTiming> {
  const { x, version, op } = args;
  const calls = x.calls.slice(args.from);
  const sendAt = calls.findLastIndex((c) => c.target === 'alto' && c.method === 'eth_sendUserOperation');
  const send = calls[sendAt];
  if (send === undefined) throw new Error('the SDK sent no eth_sendUserOperation to alto');
  const signAt = calls.slice(0, sendAt).findLastIndex(isSigning);
  const sign = calls[signAt];
  if (sign === undefined) throw new Error(`no signing call before the send: ${calls.map((c) => c.method).join(', ')}`);
  const paid = await userOperationEvent(x, op.txHash, op.userOpHash);
  if (!paid.success || paid.paymaster !== getAddress(x.fx.paymasters[version])) {
    throw new Error(`op ${op.userOpHash} did not execute paid by Patron's v${version} paymaster`);
  }
  const receipt = await x.fx.client.getTransactionReceipt({ hash: op.txHash });
  const block = await x.fx.client.getBlock({ blockNumber: receipt.blockNumber });
  return {
    t0: sign.answeredAt,
    t1: send.sentAt,
    t2: args.t2,
    blockTimestamp: Number(block.timestamp),
    validUntil: validUntilOf(send.params[0] as Record<string, unknown>, version),
    askedSeconds: askedSeconds(sign.params),
    signingCalls: calls
      .slice(0, sendAt)
      .filter(isSigning)
      .map((c) => c.method),
    between: calls.slice(signAt + 1, sendAt).map((c) => `${c.target}:${c.method}`),
  };
}

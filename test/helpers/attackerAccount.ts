import assert from 'node:assert/strict';
import { type Address, encodeAbiParameters, type Hex, parseEventLogs } from 'viem';
import { entryPoint06Abi, entryPoint09Abi } from 'viem/account-abstraction';
import type { EntryPointVersion } from '../../src/chain/chainRegistry.js';
import type { DevClient } from '../../src/chain/devClient.js';
import { packUserOperationV07 } from '../../src/paymaster/entryPoints/v07/userOperationV07.js';

/**
 * An attacker's own account, 63 bytes of EVM code put at an address with `hardhat_setCode`, that every EntryPoint
 * version takes as a smart account:
 * - `validateUserOp` (any selector but the two below): returns 32 zero bytes, "valid, no time range", whatever the
 *   signature (it never pays a prefund: Patron's paymaster does);
 * - `0xbbbbbbbb` ‖ uint256 n (BURN): burns n gas and stops; with n above the gas it has, burns all of it (out of
 *   gas, the call reverts, its gas charged);
 * - `0xdddddddd` (NOTHING): stops at once, so its callGasLimit stays unused.
 *
 * Layout (hex offsets): 00 selector == BURN → 23; 0f selector == NOTHING → 3d; 1e return 32 zero bytes;
 * 23 n, target = gasleft − n (or 0 when n > gasleft, at 32); 36 loop while gasleft > target; 3d STOP.
 */
export const ATTACKER_ACCOUNT_CODE: Hex = `0x${[
  '60003560e01c63bbbbbbbb14602357', // 00 selector == BURN → 23
  '60003560e01c63dddddddd14603d57', // 0f selector == NOTHING → 3d
  '60206000f3', // 1e return 32 zero bytes
  '5b600435805a106032575a03603656', // 23 n; gasleft < n → 32; target = gasleft − n → 36
  '5b506000', // 32 target = 0
  '5b805a11603657', // 36 loop while gasleft > target
  '5b00', // 3d stop
].join('')}`;

/**
 * A smaller attacker's account (35 bytes): `validateUserOp` (v0.6's 0x3a871cdd, v0.7+'s 0x19822f7c) returns 0 (valid,
 * no window, no prefund owed with a paymaster); any other call loops until its gas is gone.
 */
export const BURNER_CODE: Hex = '0x60003560e01c80633a871cdd14601d576319822f7c14601d575b6019565b60206000f3';

const BURN = '0xbbbbbbbb';
export const NOTHING: Hex = '0xdddddddd';

/** The account's call that burns `gas` (more than it is given: all of it). */
export const burnCallData = (gas: bigint): Hex =>
  `${BURN}${encodeAbiParameters([{ type: 'uint256' }], [gas]).slice(2)}`;

/** Burns everything the call is given. */
export const BURN_ALL: Hex = burnCallData((1n << 255n) - 1n);

/** Puts the attacker's account code at `address` (a fresh one per op, so every nonce is 0). */
export async function installAttackerAccount(client: DevClient, address: Address): Promise<void> {
  await client.setCode({ address, bytecode: ATTACKER_ACCOUNT_CODE });
}

const big = (v: unknown): bigint => BigInt(String(v));

/**
 * The attacker's op (as sent to Patron: `sender`, `callData`, hex fees, limits in `op` or in Patron's answer)
 * with Patron's answer's paymaster fields, submitted with handleOps by `bundler` as its own beneficiary; `tx` sets
 * the bundle transaction's own fees (an attacker sets no priority fee). Returns the receipt and the op's event.
 */
export async function handleAttackerOp(args: {
  readonly bundler: DevClient;
  readonly version: EntryPointVersion;
  readonly entryPoint: Address;
  readonly op: Record<string, unknown>;
  readonly answer: Record<string, unknown>;
  readonly tx?: { readonly maxFeePerGas: bigint; readonly maxPriorityFeePerGas: bigint };
}) {
  const { op, answer } = args;
  const limit = (k: string) => big(answer[k] ?? op[k]);
  const fields = {
    sender: op.sender as Address,
    nonce: big(op.nonce),
    callData: op.callData as Hex,
    callGasLimit: limit('callGasLimit'),
    verificationGasLimit: limit('verificationGasLimit'),
    preVerificationGas: limit('preVerificationGas'),
    maxFeePerGas: big(op.maxFeePerGas),
    maxPriorityFeePerGas: big(op.maxPriorityFeePerGas),
    signature: '0x' as Hex,
  };
  const beneficiary = args.bundler.account.address;
  const common = { address: args.entryPoint, functionName: 'handleOps', gas: 15_000_000n, ...args.tx } as const;
  const hash =
    args.version === '0.6'
      ? await args.bundler.writeContract({
          ...common,
          abi: entryPoint06Abi,
          args: [[{ ...fields, initCode: '0x', paymasterAndData: answer.paymasterAndData as Hex }], beneficiary],
        })
      : await args.bundler.writeContract({
          ...common,
          abi: entryPoint09Abi,
          args: [
            [
              packUserOperationV07({
                ...fields,
                paymaster: answer.paymaster as Address,
                paymasterVerificationGasLimit: big(answer.paymasterVerificationGasLimit),
                paymasterPostOpGasLimit: big(answer.paymasterPostOpGasLimit),
                paymasterData: answer.paymasterData as Hex,
              }),
            ],
            beneficiary,
          ],
        });
  const receipt = await args.bundler.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, 'success');
  // Every version's UserOperationEvent has the same signature.
  const [event] = parseEventLogs({ abi: entryPoint09Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
  assert.ok(event, 'a UserOperationEvent');
  return { receipt, event: event.args };
}

import { type Address, concat, encodeFunctionData, type Hex, parseAbi } from 'viem';
import type { UserOperationV06 } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';

/**
 * The user operation every sponsorship benchmark sends: a SimpleAccount v0.6 that is deployed by its first op
 * (factory `initCode`) and calls `execute(target, 0, 0x)`, with the limits a Biconomy SDK would send (within the
 * signing bounds: a preVerificationGas the op's size needs, a verification gas below ERC-7562's 500,000). Only the
 * nonce changes between requests: its 192-bit key (`i << 64`), so each one is a fresh, valid nonce on chain
 * (sequence 0 of a new key) and no two requests hash the same.
 */
const factoryAbi = parseAbi(['function createAccount(address owner, uint256 salt) returns (address)']);
const accountAbi = parseAbi(['function execute(address dest, uint256 value, bytes func)']);

export function simpleAccountOp(args: {
  factory: Address;
  owner: Address;
  salt: bigint;
  sender: Address;
  target: Address;
}): UserOperationV06 {
  return {
    sender: args.sender,
    nonce: 0n,
    initCode: concat([
      args.factory,
      encodeFunctionData({ abi: factoryAbi, functionName: 'createAccount', args: [args.owner, args.salt] }),
    ]),
    callData: encodeFunctionData({ abi: accountAbi, functionName: 'execute', args: [args.target, 0n, '0x'] }),
    callGasLimit: 100_000n,
    verificationGasLimit: 400_000n,
    preVerificationGas: 50_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    paymasterAndData: '0x',
    signature: '0x',
  };
}

/** The nonce of request `i`: key i, sequence 0. */
export const nonceOf = (i: number): bigint => BigInt(i) << 64n;

/** The op on the wire as the Biconomy v0.6 SDK sends it: hex nonce and fees, decimal gas strings. */
export function wireOp(op: UserOperationV06, withGas: boolean): Record<string, string> {
  return {
    sender: op.sender,
    nonce: `0x${op.nonce.toString(16)}`,
    initCode: op.initCode,
    callData: op.callData,
    ...(withGas
      ? {
          callGasLimit: op.callGasLimit.toString(),
          verificationGasLimit: op.verificationGasLimit.toString(),
          preVerificationGas: op.preVerificationGas.toString(),
        }
      : {}),
    maxFeePerGas: `0x${op.maxFeePerGas.toString(16)}`,
    maxPriorityFeePerGas: `0x${op.maxPriorityFeePerGas.toString(16)}`,
    paymasterAndData: '0x',
    signature: '0x',
  };
}

/** A JSON-RPC body split around its nonce: plain strings, so it can be sent to a load generator's process. */
export interface BodyParts {
  readonly head: string;
  readonly tail: string;
}

export function rpcBodyParts(args: {
  op: UserOperationV06;
  method: string;
  modeObject: Record<string, unknown>;
  withGas: boolean;
}): BodyParts {
  const marker = '0xNONCE';
  const text = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: args.method,
    params: [{ ...wireOp(args.op, args.withGas), nonce: marker }, args.modeObject],
  });
  const [head, tail] = text.split(marker) as [string, string];
  return { head, tail };
}

/**
 * A JSON-RPC body whose nonce is spliced in per request: built once, then each request costs one string
 * concatenation in the load generator. `body(i)` carries nonce `nonceOf(i)`.
 */
export function bodyFromParts({ head, tail }: BodyParts): (i: number) => string {
  return (i) => `${head}0x${nonceOf(i).toString(16)}${tail}`;
}

export function rpcBodyTemplate(args: Parameters<typeof rpcBodyParts>[0]): (i: number) => string {
  return bodyFromParts(rpcBodyParts(args));
}

/** An op as it crosses IPC (JSON): every field a string, bigints in decimal. */
export type IpcOp = Record<keyof UserOperationV06, string>;

export const opToIpc = (op: UserOperationV06): IpcOp =>
  Object.fromEntries(Object.entries(op).map(([k, v]) => [k, String(v)])) as IpcOp;

export function opFromIpc(o: IpcOp): UserOperationV06 {
  return {
    sender: o.sender as Address,
    nonce: BigInt(o.nonce),
    initCode: o.initCode as Hex,
    callData: o.callData as Hex,
    callGasLimit: BigInt(o.callGasLimit),
    verificationGasLimit: BigInt(o.verificationGasLimit),
    preVerificationGas: BigInt(o.preVerificationGas),
    maxFeePerGas: BigInt(o.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(o.maxPriorityFeePerGas),
    paymasterAndData: o.paymasterAndData as Hex,
    signature: o.signature as Hex,
  };
}

/**
 * The same op for EntryPoint v0.7/v0.8's SimpleAccount (same owner, salt, target, limits and fees; the factory
 * and sender are that version's), as ERC-7677 clients send it (viem's formatUserOperationRequest): hex
 * quantities, `factory` + `factoryData` instead of initCode, a 65-byte stub signature. Strings only, so it
 * crosses IPC as is; the paymaster fields are added from the service's stub (what a wallet does), see
 * `withStubFields`.
 */
export type WireOpV07 = Readonly<Record<string, string>>;

const quantityHex = (n: bigint): string => `0x${n.toString(16)}`;
/** Any 65 bytes: the account's signature is neither hashed nor checked by the paymaster. */
const STUB_ACCOUNT_SIGNATURE = `0x${'ff'.repeat(32)}${'7a'.repeat(32)}1c`;

export function simpleAccountOpV07(args: Parameters<typeof simpleAccountOp>[0]): WireOpV07 {
  const op = simpleAccountOp(args);
  return {
    sender: op.sender,
    nonce: quantityHex(op.nonce),
    factory: args.factory,
    // initCode is factory || createAccount(...): the v0.7 wire form splits it after the 20-byte address.
    factoryData: `0x${op.initCode.slice(2 + 40)}`,
    callData: op.callData,
    callGasLimit: quantityHex(op.callGasLimit),
    verificationGasLimit: quantityHex(op.verificationGasLimit),
    preVerificationGas: quantityHex(op.preVerificationGas),
    maxFeePerGas: quantityHex(op.maxFeePerGas),
    maxPriorityFeePerGas: quantityHex(op.maxPriorityFeePerGas),
    signature: STUB_ACCOUNT_SIGNATURE,
  };
}

/** The ERC-7677 paymaster fields of a stub or data answer (v0.7+), hex. */
export interface PaymasterFieldsWire {
  readonly paymaster: string;
  readonly paymasterData: string;
  readonly paymasterVerificationGasLimit: string;
  readonly paymasterPostOpGasLimit: string;
}

/** The op with a stub's paymaster fields, as viem sends it to pm_getPaymasterData after estimating on the stub. */
export function withStubFields(op: WireOpV07, stub: PaymasterFieldsWire): WireOpV07 {
  return {
    ...op,
    paymaster: stub.paymaster,
    paymasterVerificationGasLimit: stub.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: stub.paymasterPostOpGasLimit,
    paymasterData: stub.paymasterData,
  };
}

/** An ERC-7677 body `[op, entryPoint, chainIdHex, context]`, split around its nonce like `rpcBodyParts`. */
export function erc7677BodyParts(args: {
  op: WireOpV07;
  method: string;
  entryPoint: string;
  chainId: number;
  context: Record<string, unknown>;
}): BodyParts {
  const marker = '0xNONCE';
  const text = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: args.method,
    params: [{ ...args.op, nonce: marker }, args.entryPoint, quantityHex(BigInt(args.chainId)), args.context],
  });
  const [head, tail] = text.split(marker) as [string, string];
  return { head, tail };
}

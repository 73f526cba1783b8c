import {
  type AbiFunction,
  type Address,
  decodeFunctionData,
  encodeFunctionData,
  getAddress,
  type Hex,
  hexToBigInt,
  isAddressEqual,
  parseAbiItem,
  size,
  slice,
  toFunctionSelector,
} from 'viem';
import type { AccountKind } from '../config/knownAccountsSettings.js';
import { type AccountCall, accountCall, type Decoded } from './accountCall.js';
import { COMPOSABLE_V1_0, COMPOSABLE_V1_1, decodeComposable } from './composableExecution.js';
import { decodeErc7579Execute } from './erc7579Execution.js';

/**
 * The calls a smart account will make, decoded from its `callData`, so that a sponsorship policy can allow or
 * deny contracts and methods. One decoder per calldata layout, in a table keyed by the account's own selector;
 * a layout shared by several accounts is listed once (SimpleAccount, Biconomy Smart Account v2, Light Account and
 * Coinbase Smart Wallet all have `execute(address,uint256,bytes)`), with the account kinds that have it. A layout
 * only says what an account of those kinds does with the call: the caller decodes with the sender's kind, known
 * from its implementation (policies/knownAccounts.ts), and a layout of another kind is refused.
 *
 * Fail closed: a selector not in the table, a malformed encoding, a delegatecall (the account runs foreign code
 * as itself, so its "calls" are whatever that code does) except to Safe's audited MultiSend contracts, or a
 * nested delegatecall inside a MultiSend batch is `ok: false`, naming the selector and why; so are an ERC-7579
 * mode the account would not run as a plain call (policies/erc7579Execution.ts) and, where the account decodes
 * with its own assembly (ERC-7579 batches, Nexus's executeComposable: policies/composableExecution.ts), any
 * encoding but the canonical one.
 */
export type { AccountCall } from './accountCall.js';

export type AccountCallsDecoding =
  | { readonly ok: true; readonly layout: string; readonly calls: readonly AccountCall[] }
  | { readonly ok: false; readonly selector: Hex | undefined; readonly reason: string };

interface Layout {
  readonly name: string;
  /** The account kinds that execute this method as decoded here. */
  readonly kinds: readonly AccountKind[];
  readonly item: AbiFunction;
  /**
   * Decode only the canonical ABI encoding (re-encoding what viem read gives the same bytes): for layouts the
   * account reads with its own assembly, so that no encoding can show viem other calls than the account makes.
   */
  readonly canonical?: true;
  decode(args: readonly unknown[], kind: AccountKind | undefined): Decoded;
}

/** Safe's MultiSend deployments (safe-deployments 1.3.0 and 1.4.1), the only delegatecall targets decoded. */
export const SAFE_MULTISEND_ADDRESSES: readonly Address[] = [
  '0x38869bf66a61cF6bDB996A6aE40D5853Fd43B526', // MultiSend 1.4.1
  '0x9641d764fc13c8B624c04430C7356C1C7C8102e2', // MultiSendCallOnly 1.4.1
  '0xA238CBeb142c10Ef7Ad8442C6D1f9E89e07e7761', // MultiSend 1.3.0
  '0x40A2aCCbd92BCA938b02010E17A5b8929b49130D', // MultiSendCallOnly 1.3.0
];

const MULTISEND = parseAbiItem('function multiSend(bytes transactions)');
const CALL = 0;
const DELEGATECALL = 1;

const single = (args: readonly unknown[]): Decoded => {
  const [to, value, data] = args as readonly [Address, bigint, Hex];
  return [accountCall(to, value, data)];
};

const zipped = (targets: readonly Address[], values: readonly bigint[] | undefined, datas: readonly Hex[]): Decoded => {
  if (targets.length !== datas.length || (values !== undefined && values.length !== targets.length)) {
    return 'batch arrays of different lengths';
  }
  return targets.map((to, i) => accountCall(to, values?.[i] ?? 0n, datas[i] ?? '0x'));
};

const batchOfStructs = (args: readonly unknown[]): Decoded => {
  const [calls] = args as readonly [readonly { target?: Address; to?: Address; value: bigint; data: Hex }[]];
  return calls.map((c) => accountCall(c.target ?? c.to ?? '0x', c.value, c.data));
};

/**
 * Safe MultiSend's packed transactions: operation (1 byte), to (20), value (32), data length (32), data. Only
 * plain calls are decoded; a delegatecall inside the batch fails closed like one outside it.
 */
function decodeMultiSend(transactions: Hex): Decoded {
  const calls: AccountCall[] = [];
  const bytes = transactions.slice(2);
  let at = 0;
  const take = (n: number) => {
    const part = bytes.slice(at * 2, (at + n) * 2);
    if (part.length !== n * 2) throw new Error('truncated');
    at += n;
    return `0x${part}` as Hex;
  };
  try {
    while (at * 2 < bytes.length) {
      const operation = Number(hexToBigInt(take(1)));
      const to = getAddress(take(20));
      const value = hexToBigInt(take(32));
      const length = hexToBigInt(take(32));
      if (length > BigInt(bytes.length)) return 'a MultiSend entry longer than the batch';
      const data = Number(length) === 0 ? '0x' : take(Number(length));
      if (operation !== CALL) return `a MultiSend entry with operation ${operation} (only calls are decoded)`;
      calls.push(accountCall(to, value, data));
    }
  } catch {
    return 'a truncated MultiSend batch';
  }
  return calls;
}

/** Safe 4337 module: one call, or a delegatecall to a known MultiSend whose batch is decoded. */
const safeModule = (args: readonly unknown[]): Decoded => {
  const [to, value, data, operation] = args as readonly [Address, bigint, Hex, number];
  if (operation === CALL) return [accountCall(to, value, data)];
  if (operation !== DELEGATECALL) return `operation ${operation}`;
  if (!SAFE_MULTISEND_ADDRESSES.some((m) => isAddressEqual(m, to))) {
    return `a delegatecall to ${getAddress(to)}, which is not one of Safe's MultiSend contracts`;
  }
  try {
    const inner = decodeFunctionData({ abi: [MULTISEND], data });
    return decodeMultiSend(inner.args[0]);
  } catch {
    return 'a delegatecall to MultiSend that is not multiSend(bytes)';
  }
};

/** Kernel v2 `execute(to, value, data, operation)`: calls only. */
const kernelSingle = (args: readonly unknown[]): Decoded => {
  const [to, value, data, operation] = args as readonly [Address, bigint, Hex, number];
  return operation === CALL ? [accountCall(to, value, data)] : `operation ${operation} (only calls are decoded)`;
};

const fn = (signature: string) => parseAbiItem(signature) as AbiFunction;

/** The kinds with SimpleAccount's `execute(address,uint256,bytes)` (SimpleAccount v0.8: BaseAccount's). */
const EXECUTE_KINDS: readonly AccountKind[] = [
  'simpleAccountV06',
  'simpleAccountV07',
  'simpleAccountV08',
  'lightAccount',
  'biconomyV2',
  'coinbaseSmartWallet',
];

/** The table: one row per calldata layout, the accounts that use it in its name and kinds. */
const LAYOUTS: readonly Layout[] = [
  {
    name: 'execute(address,uint256,bytes): SimpleAccount, Biconomy SA v2, Light Account, Coinbase Smart Wallet',
    kinds: EXECUTE_KINDS,
    item: fn('function execute(address dest, uint256 value, bytes func)'),
    decode: single,
  },
  {
    name: 'execute_ncC: Biconomy SA v2',
    kinds: ['biconomyV2'],
    item: fn('function execute_ncC(address dest, uint256 value, bytes func)'),
    decode: single,
  },
  {
    name: 'executeBatch(address[],bytes[]): SimpleAccount v0.6, Light Account',
    kinds: ['simpleAccountV06', 'lightAccount'],
    item: fn('function executeBatch(address[] dest, bytes[] func)'),
    decode: (a) => zipped(a[0] as Address[], undefined, a[1] as Hex[]),
  },
  {
    name: 'executeBatch(address[],uint256[],bytes[]): SimpleAccount v0.7, Biconomy SA v2, Light Account',
    kinds: ['simpleAccountV07', 'biconomyV2', 'lightAccount'],
    item: fn('function executeBatch(address[] dest, uint256[] value, bytes[] func)'),
    decode: (a) => zipped(a[0] as Address[], a[1] as bigint[], a[2] as Hex[]),
  },
  {
    name: 'executeBatch_y6U: Biconomy SA v2',
    kinds: ['biconomyV2'],
    item: fn('function executeBatch_y6U(address[] dest, uint256[] value, bytes[] func)'),
    decode: (a) => zipped(a[0] as Address[], a[1] as bigint[], a[2] as Hex[]),
  },
  {
    name: 'executeBatch((address,uint256,bytes)[]): SimpleAccount v0.8, Simple7702Account, Coinbase Smart Wallet, Kernel v2',
    kinds: ['simpleAccountV08', 'coinbaseSmartWallet', 'kernelV2'],
    item: fn('function executeBatch((address target, uint256 value, bytes data)[] calls)'),
    decode: batchOfStructs,
  },
  {
    name: 'executeUserOp: Safe 4337 module',
    kinds: ['safe4337'],
    item: fn('function executeUserOp(address to, uint256 value, bytes data, uint8 operation)'),
    decode: safeModule,
  },
  {
    name: 'executeUserOpWithErrorString: Safe 4337 module',
    kinds: ['safe4337'],
    item: fn('function executeUserOpWithErrorString(address to, uint256 value, bytes data, uint8 operation)'),
    decode: safeModule,
  },
  {
    name: 'execute(address,uint256,bytes,uint8): Kernel v2',
    kinds: ['kernelV2'],
    item: fn('function execute(address to, uint256 value, bytes data, uint8 operation)'),
    decode: kernelSingle,
  },
  {
    name: 'execute(bytes32,bytes): ERC-7579 (Nexus 1.2/1.3, Kernel v3, Safe 7579)',
    kinds: ['nexusV12', 'nexusV13', 'kernelV3', 'erc7579'],
    item: fn('function execute(bytes32 mode, bytes executionCalldata)'),
    decode: (a, kind) => decodeErc7579Execute({ mode: a[0] as Hex, execution: a[1] as Hex, kind }),
  },
  {
    name: 'executeComposable: Nexus 1.2.0 (composability 1.0.0)',
    kinds: ['nexusV12'],
    item: COMPOSABLE_V1_0,
    canonical: true,
    decode: decodeComposable,
  },
  {
    name: 'executeComposable: Nexus 1.3 (composability 1.1.0)',
    kinds: ['nexusV13'],
    item: COMPOSABLE_V1_1,
    canonical: true,
    decode: decodeComposable,
  },
];

const BY_SELECTOR = new Map<Hex, Layout>(LAYOUTS.map((l) => [toFunctionSelector(l.item), l]));

/** The selectors this module decodes, for documentation and the admin API's help. */
export const DECODED_ACCOUNT_SELECTORS: readonly { readonly selector: Hex; readonly layout: string }[] = [
  ...BY_SELECTOR,
].map(([selector, l]) => ({ selector, layout: l.name }));

/** `execute(address,uint256,bytes)`: the layout nearly every sponsored op has. */
const EXECUTE_SELECTOR: Hex = '0xb61d27f6';
const EXECUTE_LAYOUT =
  'execute(address,uint256,bytes): SimpleAccount, Biconomy SA v2, Light Account, Coinbase Smart Wallet';
const WORD = 64;

/**
 * `execute(address,uint256,bytes)` in its canonical encoding, read by hand: viem's generic decoder costs ~9 µs
 * per request on the sponsorship path, this ~1 µs. Anything not canonical (another offset, dirty address bits,
 * a short or padded-out body, non-zero padding) returns undefined and goes through the generic decoder, which
 * accepts or refuses it as it always did.
 */
function decodeExecuteFast(callData: Hex): AccountCall | undefined {
  const body = callData.slice(10);
  if (body.length < 4 * WORD || !/^[0-9a-fA-F]*$/.test(body)) return undefined;
  if (!/^0{24}$/.test(body.slice(0, 24))) return undefined;
  if (Number.parseInt(body.slice(2 * WORD, 3 * WORD), 16) !== 0x60) return undefined;
  const lengthWord = body.slice(3 * WORD, 4 * WORD);
  if (!/^0{48}/.test(lengthWord)) return undefined;
  const length = Number.parseInt(lengthWord, 16);
  const padded = Math.ceil(length / 32) * WORD;
  if (body.length !== 4 * WORD + padded) return undefined;
  const data = body.slice(4 * WORD, 4 * WORD + length * 2);
  if (!/^0*$/.test(body.slice(4 * WORD + length * 2))) return undefined;
  const to = `0x${body.slice(24, WORD)}` as Address;
  return accountCall(to, BigInt(`0x${body.slice(WORD, 2 * WORD)}`), `0x${data}`);
}

/**
 * Bounds on what is decoded, so that one request cannot buy seconds of CPU: a 250 KB batch of 3,900 calls took
 * ~50 ms to decode and, against a 1,000-contract allowlist, seconds to check. Ops beyond them are not checked but
 * refused (fail closed) where an allowlist applies; a dApp with bigger batches can list senders instead.
 */
export const MAX_DECODED_CALLDATA_BYTES = 32 * 1024;
export const MAX_DECODED_CALLS = 64;

/**
 * The calls in `callData`, decoded as an account of `kind` executes them: a method the kind does not have is
 * refused like an unknown one. Without a kind, every layout is tried (documentation and tests only: a policy
 * decodes with the sender's kind).
 */
export function decodeAccountCalls(callData: Hex, kind?: AccountKind): AccountCallsDecoding {
  // An op that only deploys the account (Biconomy's `useEmptyDeployCallData`) makes no call.
  if (size(callData) === 0) return { ok: true, layout: 'no call', calls: [] };
  if (size(callData) < 4) return { ok: false, selector: undefined, reason: 'callData shorter than a selector' };
  const selector = slice(callData, 0, 4).toLowerCase() as Hex;
  if (size(callData) > MAX_DECODED_CALLDATA_BYTES) {
    return {
      ok: false,
      selector,
      reason: `callData of ${size(callData)} bytes, above the ${MAX_DECODED_CALLDATA_BYTES} Patron decodes`,
    };
  }
  if (selector === EXECUTE_SELECTOR && (kind === undefined || EXECUTE_KINDS.includes(kind))) {
    const fast = decodeExecuteFast(callData);
    if (fast !== undefined) return { ok: true, layout: EXECUTE_LAYOUT, calls: [fast] };
  }
  const layout = BY_SELECTOR.get(selector);
  if (layout === undefined) return { ok: false, selector, reason: `unknown account method ${selector}` };
  if (kind !== undefined && !layout.kinds.includes(kind)) {
    return {
      ok: false,
      selector,
      reason: `${layout.item.name} (${selector}) is not a method a ${kind} account executes`,
    };
  }
  let args: readonly unknown[];
  try {
    args = decodeFunctionData({ abi: [layout.item], data: callData }).args ?? [];
  } catch {
    return { ok: false, selector, reason: `malformed ${layout.item.name} call data` };
  }
  if (layout.canonical && encodeFunctionData({ abi: [layout.item], args }).toLowerCase() !== callData.toLowerCase()) {
    return { ok: false, selector, reason: `${layout.item.name} call data not in the canonical ABI encoding` };
  }
  const decoded = layout.decode(args, kind);
  if (typeof decoded === 'string') return { ok: false, selector, reason: decoded };
  if (decoded.length > MAX_DECODED_CALLS) {
    return {
      ok: false,
      selector,
      reason: `${decoded.length} calls in one op, above the ${MAX_DECODED_CALLS} Patron checks`,
    };
  }
  return { ok: true, layout: layout.name, calls: decoded };
}

import {
  type AbiFunction,
  type Address,
  concat,
  type Hex,
  hexToBigInt,
  parseAbiItem,
  size,
  slice,
  toFunctionSelector,
} from 'viem';
import { type AccountCall, accountCall, type Decoded } from './accountCall.js';

/**
 * Nexus's native `executeComposable(ComposableExecution[])` (bcnmy/composability, `ComposableExecutionBase` and
 * `ComposableExecutionLib`): each execution calls a target with `functionSig ‖ input params`, where an input param
 * is raw bytes (RAW_BYTES), or fetched when the op runs (STATIC_CALL: another contract's answer; BALANCE: a
 * balance). Each output param then calls `Storage.writeStorage` on a contract its data names, once per value it
 * stores. Nexus 1.2.0 runs composability 1.0.0 (target and value are fields of the execution); the Nexus of
 * abstractjs's MEE 2.2.1+ (`biconomy.nexus.1.3.1`) runs 1.1.0 (target and value are input params of type TARGET
 * and VALUE). The two ABIs have different selectors.
 *
 * What an allowlist can check: the target, which must be static (raw bytes; a target fetched at run time is
 * refused), likewise the value, and the selector, which is always the static `functionSig`. The arguments may be
 * fetched at run time: a call with any such argument has `runtimeArguments` and only its selector as data.
 * The storage writes are calls too (to whatever contract the output param names), so they are listed as calls
 * and the allowlist must allow that contract.
 */
const CONSTRAINT = 'struct Constraint { uint8 constraintType; bytes referenceData; }';
const OUTPUT_PARAM = 'struct OutputParam { uint8 fetcherType; bytes paramData; }';
export const COMPOSABLE_V1_0 = parseAbiItem([
  'function executeComposable(ComposableExecution[] executions)',
  'struct ComposableExecution { address to; uint256 value; bytes4 functionSig; InputParam[] inputParams; OutputParam[] outputParams; }',
  'struct InputParam { uint8 fetcherType; bytes paramData; Constraint[] constraints; }',
  CONSTRAINT,
  OUTPUT_PARAM,
]) as AbiFunction;
export const COMPOSABLE_V1_1 = parseAbiItem([
  'function executeComposable(ComposableExecution[] cExecutions)',
  'struct ComposableExecution { bytes4 functionSig; InputParam[] inputParams; OutputParam[] outputParams; }',
  'struct InputParam { uint8 paramType; uint8 fetcherType; bytes paramData; Constraint[] constraints; }',
  CONSTRAINT,
  OUTPUT_PARAM,
]) as AbiFunction;

const RAW_BYTES = 0;
const STATIC_CALL = 1;
const BALANCE = 2;
const TARGET = 0;
const VALUE = 1;
const CALL_DATA = 2;
const EXEC_RESULT = 0;
const WRITE_STORAGE: Hex = toFunctionSelector('writeStorage(bytes32,bytes32,address)');

interface InputParam {
  readonly paramType?: number;
  readonly fetcherType: number;
  readonly paramData: Hex;
}
interface OutputParam {
  readonly fetcherType: number;
  readonly paramData: Hex;
}
interface Execution {
  readonly to?: Address;
  readonly value?: bigint;
  readonly functionSig: Hex;
  readonly inputParams: readonly InputParam[];
  readonly outputParams: readonly OutputParam[];
}

const word = (data: Hex, i: number): Hex => slice(data, 32 * i, 32 * (i + 1));
const isAddressWord = (w: Hex) => /^0x0{24}/.test(w);

/** The static part of an input param (RAW_BYTES), or undefined for one fetched at run time. */
function fetcher(param: InputParam): 'raw' | 'runtime' | string {
  if (param.fetcherType === RAW_BYTES) return 'raw';
  if (param.fetcherType === STATIC_CALL || param.fetcherType === BALANCE) return 'runtime';
  return `input fetcher type ${param.fetcherType}`;
}

/**
 * `Storage.writeStorage` calls an output param makes: the storage contract is the second word of EXEC_RESULT's
 * data and the fourth of STATIC_CALL's, which the library reads with `calldataload` (past the data's end it would
 * read the next bytes of the call), so data too short to hold it is refused.
 */
function outputCalls(outputs: readonly OutputParam[]): Decoded {
  const calls: AccountCall[] = [];
  for (const o of outputs) {
    const words = o.fetcherType === EXEC_RESULT ? 3 : o.fetcherType === STATIC_CALL ? 5 : undefined;
    if (words === undefined) return `output fetcher type ${o.fetcherType}`;
    if (size(o.paramData) < 32 * words) return 'an output param whose data is shorter than the words it is read as';
    if (hexToBigInt(word(o.paramData, 0)) === 0n) continue;
    const storage = slice(word(o.paramData, o.fetcherType === EXEC_RESULT ? 1 : 3), 12);
    calls.push({ ...accountCall(storage, 0n, WRITE_STORAGE), runtimeArguments: true });
  }
  return calls;
}

/** One execution's call: undefined when its target is zero (the library then makes no call). */
function executionCall(e: Execution): AccountCall | undefined | string {
  let to = e.to;
  let value = e.value ?? 0n;
  const data: Hex[] = [e.functionSig];
  let runtime = false;
  let seen = 0;
  for (const p of e.inputParams) {
    const f = fetcher(p);
    if (f !== 'raw' && f !== 'runtime') return f;
    const type = p.paramType ?? CALL_DATA;
    if (type === CALL_DATA) {
      if (f === 'runtime') runtime = true;
      else data.push(p.paramData);
      continue;
    }
    if (type !== TARGET && type !== VALUE) return `input param type ${type}`;
    const what = type === TARGET ? 'target' : 'value';
    if ((seen & (1 << type)) !== 0) return `a composable ${what} given twice`;
    seen |= 1 << type;
    if (f === 'runtime') return `a composable ${what} fetched at run time, which no allowlist can check`;
    if (size(p.paramData) < 32) return `a composable ${what} shorter than a word`;
    const w = word(p.paramData, 0);
    if (type === VALUE) value = hexToBigInt(w);
    else if (!isAddressWord(w)) return 'a composable target that is not an address (the account reverts)';
    else to = slice(w, 12);
  }
  if (to === undefined || hexToBigInt(to) === 0n) return undefined;
  if (runtime) return { ...accountCall(to, value, e.functionSig), runtimeArguments: true };
  return accountCall(to, value, concat(data));
}

export function decodeComposable(args: readonly unknown[]): Decoded {
  const [executions] = args as readonly [readonly Execution[]];
  const calls: AccountCall[] = [];
  for (const e of executions) {
    const c = executionCall(e);
    if (typeof c === 'string') return c;
    if (c !== undefined) calls.push(c);
    const writes = outputCalls(e.outputParams);
    if (typeof writes === 'string') return writes;
    calls.push(...writes);
  }
  return calls;
}

import {
  type Address,
  decodeAbiParameters,
  encodeAbiParameters,
  type Hex,
  hexToBigInt,
  parseAbiParameters,
  size,
  slice,
} from 'viem';
import type { AccountKind } from '../config/knownAccountsSettings.js';
import { accountCall, type Decoded } from './accountCall.js';

/**
 * ERC-7579 `execute(bytes32 mode, bytes executionCalldata)` decoded exactly as the account runs it. The mode is
 * callType (1 byte) ‖ execType (1) ‖ unused (4) ‖ modeSelector (4) ‖ payload (22) (https://eips.ethereum.org/EIPS/eip-7579).
 * Only single (0x00) and batch (0x01) calls with the default (0x00) or try (0x01) exec type are decoded: a
 * delegatecall (0xff) runs foreign code as the account, a staticcall (0xfe) and any other type are not calls the
 * allowlist can name. What the last 30 bytes may hold is decided per kind from the account's source:
 * - Nexus 1.2/1.3 (bcnmy/nexus `ModeLib.decodeBasic`) and Kernel 0.3 (zerodevapp/kernel `ExecLib.decode`, whose
 *   selector and payload `execute` discards) read only the first two bytes: the rest changes nothing and is ignored;
 * - any other ERC-7579 account (`erc7579`, listed by an operator) may interpret its mode selector and payload, so
 *   they must be zero, else the op is refused.
 */
const IGNORES_MODE_TAIL: ReadonlySet<AccountKind> = new Set(['nexusV12', 'nexusV13', 'kernelV3']);

const CALL_TYPES: Readonly<Record<string, string>> = {
  '0xfe': 'a staticcall (call type 0xfe)',
  '0xff': 'a delegatecall (call type 0xff), which runs foreign code as the account',
};

const BATCH = parseAbiParameters('(address target, uint256 value, bytes callData)[]');

export function decodeErc7579Execute(args: {
  readonly mode: Hex;
  readonly execution: Hex;
  readonly kind: AccountKind | undefined;
}): Decoded {
  const { mode, execution, kind } = args;
  const callType = slice(mode, 0, 1);
  const execType = slice(mode, 1, 2);
  if (callType !== '0x00' && callType !== '0x01') {
    return `ERC-7579 ${CALL_TYPES[callType] ?? `call type ${callType}`}: only single and batch calls are decoded`;
  }
  if (execType !== '0x00' && execType !== '0x01') {
    return `ERC-7579 exec type ${execType} (only default 0x00 and try 0x01 are decoded)`;
  }
  const tail = slice(mode, 2);
  if ((kind === undefined || !IGNORES_MODE_TAIL.has(kind)) && !/^0x0*$/.test(tail)) {
    return `ERC-7579 mode ${mode} with a non-zero mode selector or payload, which this account may interpret`;
  }
  return callType === '0x00' ? decodeSingle(execution) : decodeBatch(execution);
}

/** target (20 bytes) ‖ value (32) ‖ data (the rest), as Nexus's and Kernel's `decodeSingle` slice it. */
function decodeSingle(execution: Hex): Decoded {
  if (size(execution) < 52) return 'a single execution shorter than target and value';
  const to: Address = slice(execution, 0, 20);
  const data = size(execution) > 52 ? slice(execution, 52) : '0x';
  return [accountCall(to, hexToBigInt(slice(execution, 20, 52)), data)];
}

/**
 * An ABI-encoded `Execution[]`. The accounts read it with their own assembly (Solady's LibERC7579 bounds checks),
 * which accepts encodings viem reads differently (overlapping offsets, dirty address bits, trailing bytes): only
 * the canonical encoding, the one re-encoding what viem read gives back byte for byte, is decoded, so both
 * parsers see the same calls.
 */
function decodeBatch(execution: Hex): Decoded {
  let calls: readonly { target: Address; value: bigint; callData: Hex }[];
  try {
    [calls] = decodeAbiParameters(BATCH, execution);
  } catch {
    return 'a malformed batch execution';
  }
  if (encodeAbiParameters(BATCH, [calls]).toLowerCase() !== execution.toLowerCase()) {
    return 'a batch execution not in the canonical ABI encoding';
  }
  return calls.map((c) => accountCall(c.target, c.value, c.callData));
}

import type { Hex } from 'viem';
import type { Keccak } from './abiWords.js';
import { userOpHashV06 } from './v06/patronPaymasterV06.js';
import { userOpHashForVersion } from './v07/hashesV07.js';

/**
 * Everything an EntryPoint's userOpHash covers, as plain data (strings, numbers, bigints): what a signature's
 * hash is computed from where it is needed, which may be another thread (the request log's writer, off the serving
 * loop: requestLog/requestLogThread.ts). `userOpHashOf` is the one function that hashes it, on every version.
 */
export type UserOpHashInput =
  | ({ readonly version: '0.6' } & Parameters<typeof userOpHashV06>[0])
  | Parameters<typeof userOpHashForVersion>[0];

export function userOpHashOf(input: UserOpHashInput, keccak: Keccak): Hex {
  return input.version === '0.6' ? userOpHashV06(input, keccak) : userOpHashForVersion(input, keccak);
}

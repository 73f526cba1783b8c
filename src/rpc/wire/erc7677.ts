import type { Address } from 'viem';
import type { PartialUserOperation } from '../../paymaster/partialUserOperation.js';
import { type ModeObject, parseModeObjectFast } from './modeObject.js';
import { NOT_SURE, readAddress, readQuantity } from './scalars.js';
import { parsePartialUserOperationFast } from './userOperation.js';

/**
 * ERC-7677's `[userOperation, entryPoint, chainId, context?]` for the common shape, or undefined (run the schema):
 * every v0.7+ client's stub and data calls. A null or absent context stays as the schema leaves it.
 */
export function parseErc7677ParamsFast(
  params: unknown,
): [PartialUserOperation, Address, bigint, ModeObject | null] | [PartialUserOperation, Address, bigint] | undefined {
  if (!Array.isArray(params) || (params.length !== 3 && params.length !== 4)) return undefined;
  const op = parsePartialUserOperationFast(params[0]);
  const entryPoint = readAddress(params[1]);
  const chainId = readQuantity(params[2]);
  if (op === undefined || entryPoint === NOT_SURE || chainId === NOT_SURE) return undefined;
  if (params.length === 3) return [op, entryPoint, chainId];
  if (params[3] === null) return [op, entryPoint, chainId, null];
  const mode = parseModeObjectFast(params[3]);
  return mode === undefined ? undefined : [op, entryPoint, chainId, mode];
}

import { ValidationError } from '../errors/PatronError.js';
import type { ModeObject } from './wire/modeObject.js';
import { parseTokenInfo } from './wire/tokenInfo.js';

/**
 * The token an ERC20 request pays in: Pimlico's `token` (the ERC-7677 context of permissionless's ERC-20 flow) or
 * Biconomy's `tokenInfo.feeTokenAddress`, else `tokenInfo.preferredToken`. Two different tokens in one request
 * are refused rather than one of them picked: the client's approval is for one of them only.
 */
export function feeTokenOf(mode: ModeObject, where: string): string | undefined {
  const info = parseTokenInfo(mode.tokenInfo);
  const named = info.feeTokenAddress ?? info.preferredToken;
  if (mode.token === undefined) return named;
  if (named !== undefined && named.toLowerCase() !== mode.token.toLowerCase()) {
    throw new ValidationError(
      `Invalid params: ${where}.token: ${mode.token} is not the token tokenInfo names (${named}); send one fee token`,
    );
  }
  return mode.token;
}

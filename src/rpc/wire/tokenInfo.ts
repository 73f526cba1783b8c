import { z } from 'zod';
import { ValidationError } from '../../errors/PatronError.js';

/**
 * `tokenInfo` of the mode object: `preferredToken` and `tokenList` (quotes, spec §2.5) or `feeTokenAddress`
 * (the token chosen for the final data, Biconomy's pm_sponsorUserOperation). Addresses are kept as sent, so
 * `unsupportedTokens` echoes them unchanged; unknown fields are ignored, `{}` and null mean "nothing chosen".
 */
const tokenAddress = z
  .string({ error: 'must be a token address' })
  .regex(/^0x[0-9a-fA-F]{40}$/, { error: 'must be a token address (0x and 40 hex digits)' });

const tokenInfoSchema = z
  .object(
    {
      preferredToken: tokenAddress.optional(),
      tokenList: z.array(tokenAddress, { error: 'must be an array of token addresses' }).max(100).optional(),
      feeTokenAddress: tokenAddress.optional(),
    },
    { error: 'must be an object' },
  )
  .nullable()
  .optional();

export interface TokenInfo {
  readonly preferredToken?: string | undefined;
  readonly tokenList?: readonly string[] | undefined;
  readonly feeTokenAddress?: string | undefined;
}

export function parseTokenInfo(v: unknown): TokenInfo {
  const r = tokenInfoSchema.safeParse(v);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = (issue?.path ?? []).reduce<string>(
      (acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : `${acc}.${String(p)}`),
      'params[1].tokenInfo',
    );
    throw new ValidationError(`Invalid params: ${where}: ${issue?.message ?? 'invalid'}`);
  }
  return r.data ?? {};
}

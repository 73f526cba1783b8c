import { z } from 'zod';
import type { TokenRateQuote } from '../../paymaster/token/tokenRateQuotes.js';
import { attestationUidSchema } from './modeObject.js';
import { permitContextSchema } from './permitContext.js';
import { address, hexQuantity as hex, quantity } from './scalars.js';

/* Pimlico's dialect (permissionless's Pimlico client): its pm_sponsorUserOperation context and its token quotes. */

/**
 * Pimlico's context (permissionless `createPimlicoClient().sponsorUserOperation`): the policy to use, how long
 * the signature should hold, and `token`, Pimlico's ERC-20 paymaster context (`paymasterContext: { token }`): the
 * ERC20 mode paying in that token, as in every other dialect (docs/guides/token-mode.md, "Pimlico's ERC-20 dialect"), never a
 * sponsorship its sender did not ask for; with `permit`, the account's signed permit (token mode 3). Unknown fields are
 * ignored, as Pimlico does.
 */
export const pimlicoContextSchema = z
  .object(
    {
      sponsorshipPolicyId: z.string({ error: 'must be a string' }).min(1).max(100).optional(),
      attestationUid: attestationUidSchema.optional(),
      token: address.optional(),
      validForSeconds: z
        .number({ error: 'must be a number of seconds' })
        .int({ error: 'must be a whole number of seconds' })
        .positive({ error: 'must be a positive number of seconds' })
        .optional(),
      webhookData: z.record(z.string(), z.unknown(), { error: 'must be a JSON object' }).optional(),
      // The dApp backend's token (docs/guides/sponsorship-tokens.md), as in the ERC-7677 context.
      sponsorshipToken: z
        .string({ error: 'must be a string (the sponsorship token from the dApp backend)' })
        .optional(),
      // The account's signed permit with `token`, as in the ERC-7677 context (permitContext.ts).
      permit: permitContextSchema.optional(),
    },
    { error: 'must be an object' },
  )
  .nullable()
  .optional();

export type PimlicoContext = z.infer<typeof pimlicoContextSchema>;

/** pimlico_getTokenQuotes's params: `[{ tokens }, entryPoint, chainId]`. */
export const tokenQuotesParams = z.tuple(
  [
    z.object(
      { tokens: z.array(address, { error: 'must be an array of token addresses' }).max(100) },
      { error: 'must be { tokens: Address[] }' },
    ),
    address,
    quantity,
  ],
  { error: 'must be [{ tokens }, entryPoint, chainId]' },
);

/**
 * pimlico_getTokenQuotes's result on the wire: `{ quotes }`, quantities as hex (permissionless reads them with
 * hexToBigInt). `balanceSlot` and `allowanceSlot` are left out: Patron does not know a token's storage layout, and
 * permissionless needs them only for its opt-in balance override.
 */
export function tokenQuotesResult(quotes: readonly TokenRateQuote[]) {
  return {
    quotes: quotes.map((q) => ({
      paymaster: q.paymaster,
      token: q.token,
      postOpGas: hex(q.postOpGas),
      exchangeRate: hex(q.exchangeRate),
      exchangeRateNativeToUsd: hex(q.nativeUsdE6),
    })),
  };
}

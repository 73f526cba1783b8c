import { TokenPaymentError } from '../../errors/PatronError.js';
import {
  type EntryPointModule,
  type FinalUserOperation,
  type GasLimits,
  gasLimitsOf,
} from '../entryPoints/entryPointModule.js';
import { maxTokenCostOf, POST_OP_OVERHEAD, type TokenPrice, weiToTokenUnits } from '../entryPoints/tokenMath.js';
import { affordableCaps } from './affordableCaps.js';

/**
 * The token mode's signed maximum charge and the gas it is signed over (docs/guides/token-mode.md, "Paying gas in ERC-20"):
 * - the charge formula at the most the op can cost: its limits, or on v0.7+ the caps when the client's bundler
 *   estimates after Patron signs (gasBounds.ts gasCapsFor);
 * - an approval below that shrinks the caps toward the limits until the maximum fits it (affordableCaps.ts):
 *   signing wide caps with a smaller maximum would let whoever submits the op use gas the charge no longer covers;
 * - an approval below even the limits' maximum (a quote accepted before the approval joined the op) becomes the
 *   maximum if it covers the op's expected cost (the simulated gas plus the postOp overhead at maxFeePerGas), and is
 *   refused below that; only where the dApp's guarantee is open (the deposit pays what the op costs above it).
 */
export function signedMaximum(args: {
  readonly ep: EntryPointModule;
  /** The op over its own limits (every gas value final). */
  readonly exact: FinalUserOperation;
  /** Caps to sign instead of the limits, if any (v0.7+ only: v0.6 binds its limits exactly). */
  readonly caps: GasLimits | undefined;
  readonly price: TokenPrice;
  /** What the user approved the paymaster for (in the op, or before it). */
  readonly available: bigint;
  /** The gas the op was simulated to use in all. */
  readonly expectedGas: bigint;
  readonly symbol: string;
  /**
   * Set where the dApp's guarantee is closed to this call (guaranteeTerms.ts): the error for an `available` below the
   * maximum, which is then refused instead of signed as the maximum. A maximum below what the op can cost leaves the
   * deposit to pay the rest whenever the op uses more gas at inclusion than simulated (the account's code decides):
   * that part is a guarantee too.
   */
  readonly shortfallRefused?: ((available: bigint, maximum: bigint) => Error) | undefined;
  /**
   * Refuse, with this error, an `available` below the maximum (at limits the caps shrank to) instead of signing it
   * as the maximum when it covers the expected fee: for a permit, asked for at the maximum already. Checked before
   * `shortfallRefused`: a permit's own refusal says what to sign.
   */
  readonly refuseBelowMaximum?: ((maximum: bigint) => Error) | undefined;
}): { final: FinalUserOperation; maxTokenCost: bigint } {
  const { ep, exact, price, available } = args;
  const fee = exact.maxFeePerGas;
  const chargeAt = (o: FinalUserOperation) => maxTokenCostOf(ep.maxChargeWei(o, fee), price);
  let final: FinalUserOperation =
    args.caps !== undefined && !ep.paymasterInAccountGas ? { ...exact, gasCaps: args.caps } : exact;
  let maxTokenCost = chargeAt(final);
  if (available < maxTokenCost && final.gasCaps !== undefined) {
    const gasCaps = affordableCaps({
      limits: exact,
      caps: final.gasCaps,
      charge: (caps) => chargeAt({ ...exact, gasCaps: caps }),
      budget: available,
    });
    final = { ...exact, gasCaps: gasCaps ?? gasLimitsOf(exact) };
    maxTokenCost = chargeAt(final);
  }
  if (available < maxTokenCost && args.refuseBelowMaximum !== undefined) throw args.refuseBelowMaximum(maxTokenCost);
  if (available < maxTokenCost) {
    if (args.shortfallRefused !== undefined) throw args.shortfallRefused(available, maxTokenCost);
    const expected = weiToTokenUnits((args.expectedGas + POST_OP_OVERHEAD) * fee, price);
    if (available < expected) {
      throw new TokenPaymentError(
        `The ${args.symbol} approval for the paymaster (${available} base units) is below this operation's expected fee (${expected}); request a new quote and approve its maxGasFee`,
      );
    }
    maxTokenCost = available;
  }
  return { final, maxTokenCost };
}

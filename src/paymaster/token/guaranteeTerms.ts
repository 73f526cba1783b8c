import { type Address, erc20Abi } from 'viem';
import type { ChainRuntime } from '../../chain/chainRegistry.js';
import type { MethodFamily } from '../../dappSettings/callerRestrictions.js';
import type { GuaranteeCapSetting, TokenGuarantees } from '../../dappSettings/tokenGuarantees.js';
import { TokenPaymentError } from '../../errors/PatronError.js';
import type { CapWindow } from '../../policies/capWindows.js';
import type { PartialUserOperation } from '../partialUserOperation.js';
import { approvalInCallData } from './callDataApproval.js';

/**
 * Whether this call may get the token mode's mode 2 (tokenGuarantee.ts): a guarantee is sponsorship (the deposit pays
 * when the charge fails), so it needs the dApp's choice, token guarantees turned on with a cap (off by default,
 * dappSettings/tokenGuarantees.ts), and a key that may ask for sponsorship: one whose method families, if its owner limited
 * them (dappSettings/callerRestrictions.ts), include `sponsorship`. The token calls themselves are the `tokenQuotes`
 * family, so a key limited to it reaches this path and must not get a sponsorship through it.
 */
export type GuaranteeTerms =
  | { readonly allowed: true; readonly cap: GuaranteeCapSetting }
  | { readonly allowed: false; readonly rule: Exclude<GuaranteeRefusalRule, 'guaranteeCap'> };

/**
 * `data.rule` of a refused guarantee (-32021), as the docs list them: a denial by the dApp's setting (the request log's
 * and the metrics' outcome `denied`, rpc/callOutcome.ts), where the rest of -32021 is the account's own shortfall.
 */
export const GUARANTEE_REFUSAL_RULES = ['guaranteeOff', 'guaranteeKeyFamily', 'guaranteeCap'] as const;
export type GuaranteeRefusalRule = (typeof GUARANTEE_REFUSAL_RULES)[number];

const OFF: GuaranteeTerms = Object.freeze({ allowed: false, rule: 'guaranteeOff' });
const KEY_FAMILY: GuaranteeTerms = Object.freeze({ allowed: false, rule: 'guaranteeKeyFamily' });

/** The terms from the cached dApp record and its key's compiled method families: no I/O, nothing allocated when off. */
export function guaranteeTermsOf(args: {
  readonly guarantees: TokenGuarantees | undefined;
  readonly methods: ReadonlySet<MethodFamily> | undefined;
}): GuaranteeTerms {
  const g = args.guarantees;
  if (g?.enabled !== true || g.cap === undefined) return OFF;
  if (args.methods !== undefined && !args.methods.has('sponsorship')) return KEY_FAMILY;
  return { allowed: true, cap: g.cap };
}

interface Refused {
  readonly symbol: string;
  readonly paymaster: Address;
}

/** What every refusal says first: why this op needs a guarantee, and what that costs the dApp. */
const needs = (r: Refused) =>
  `This operation batches its ${r.symbol} approval, so its charge is collected after it runs and can fail, and then the paymaster's deposit pays its gas: the dApp's guarantee (token mode 2)`;

/** The ways to pay without it. */
const ways = (r: Refused) =>
  `approve the paymaster ${r.paymaster} for ${r.symbol} before the operation (then it is prefunded: mode 1), or pay with a permit where the token supports it`;

/** The refusal of a guarantee the dApp did not turn on, or one asked through a key that may not ask for sponsorship. */
export function guaranteeRefused(args: Refused & { readonly rule: 'guaranteeOff' | 'guaranteeKeyFamily' }) {
  const why =
    args.rule === 'guaranteeOff'
      ? 'this dApp has token guarantees off (the default), so Patron does not sign it'
      : 'a guarantee is sponsorship and this API key may not ask for it (its method families exclude "sponsorship"), so Patron does not sign it';
  const owner = args.rule === 'guaranteeOff' ? `, or the dApp's owner turns token guarantees on with a cap` : '';
  return new TokenPaymentError(`${needs(args)}; ${why}. To pay: ${ways(args)}${owner}`, {
    data: { rule: args.rule, paymaster: args.paymaster },
  });
}

/**
 * The refusal of an allowance below the op's maximum charge where the guarantee is closed: signed as the maximum, it
 * would leave the deposit to pay what the op costs above it (its own code decides how much gas it burns at
 * inclusion), which is a guarantee too.
 */
export function guaranteeShortfall(
  args: Refused & {
    readonly rule: 'guaranteeOff' | 'guaranteeKeyFamily';
    readonly available: bigint;
    readonly maximum: bigint;
  },
) {
  const why =
    args.rule === 'guaranteeOff'
      ? 'which only the dApp may guarantee, and its token guarantees are off (the default)'
      : 'a guarantee, which this API key may not ask for (its method families exclude "sponsorship")';
  return new TokenPaymentError(
    `The ${args.symbol} allowance for the paymaster ${args.paymaster} (${args.available} base units) is below this operation's maximum charge (${args.maximum}): signed as the maximum, it would leave the paymaster's deposit to pay what the operation costs above it, ${why}. To pay: approve the paymaster for at least ${args.maximum} before the operation, or pay with a permit where the token supports it`,
    {
      data: {
        rule: args.rule,
        paymaster: args.paymaster,
        allowance: args.available.toString(),
        maxTokenCost: args.maximum.toString(),
      },
    },
  );
}

/** The refusal of a guarantee the dApp's cap has no room for in its current window (the ledger's counters). */
export function guaranteeCapRefused(
  args: Refused & {
    readonly charge: { readonly amount: bigint; readonly limit: bigint; readonly window: CapWindow };
    readonly resets: string;
    readonly used: bigint;
    readonly reserved: bigint;
  },
) {
  const { charge } = args;
  const left = charge.limit - args.used - args.reserved;
  const end = charge.window.end;
  const until = end === undefined ? '' : `, until ${new Date(end).toISOString()}`;
  const wait = end === undefined ? "the dApp's owner raises the cap" : 'try again once the cap resets';
  return new TokenPaymentError(
    `${needs(args)}; the dApp's token-guarantee cap of ${charge.limit} wei (${args.resets}${until}) has ${left < 0n ? 0n : left} wei left and this operation needs ${charge.amount} wei. To pay: ${ways(args)}, or ${wait}`,
    {
      data: {
        rule: 'guaranteeCap',
        unit: 'wei',
        value: charge.amount.toString(),
        limit: charge.limit.toString(),
        used: args.used.toString(),
        reserved: args.reserved.toString(),
        ...(end === undefined ? {} : { resetsAt: Math.floor(end / 1000) }),
        paymaster: args.paymaster,
      },
    },
  );
}

/**
 * The ERC-7677 stub's early word on a guarantee: an op that batches its approval, for an account with no allowance at
 * all, can only be signed in mode 2, so where the guarantee is refused the stub says so before the wallet spends an
 * estimation on it. One allowance read, only for such an op; a failed read leaves the word to the final data.
 */
export async function precheckGuarantee(args: {
  readonly chain: ChainRuntime;
  readonly userOp: PartialUserOperation;
  readonly token: { readonly address: Address; readonly symbol: string };
  readonly guarantee: GuaranteeTerms;
}): Promise<void> {
  const { chain, guarantee } = args;
  if (guarantee.allowed || approvalInCallData(args.userOp.callData, chain.paymaster) === undefined) return;
  const allowance = await chain.client
    .readContract({
      address: args.token.address,
      abi: erc20Abi,
      functionName: 'allowance',
      args: [args.userOp.sender, chain.paymaster],
    })
    .catch(() => undefined);
  if (allowance !== 0n) return;
  throw guaranteeRefused({ symbol: args.token.symbol, paymaster: chain.paymaster, rule: guarantee.rule });
}

import { type Address, type Hex, isAddressEqual, size } from 'viem';
import { MeeQuoteRefusedError } from './MeeQuoteRefusedError.js';
import type { MeeQuote, QuotedOp } from './meeQuote.js';
import { laneOfNonce, MEE_VERSIONS, type MeeVersion } from './meeVersions.js';
import { decodePaymentTransfer } from './paymentTransfer.js';
import { meeUserOpHash, merkleOf, userOpHashV07 } from './quoteHashes.js';

/**
 * How long a payment op's window may be and how far ahead it may end (docs/guides/mee-sponsorship.md, "Windows").
 * abstractjs gives each op 180 s from the quote (USEROP_MIN_EXEC_WINDOW_DURATION), a clean-up op 90 s more; a
 * signature lives as long as its window, and the tank's payment can be included any time in it.
 */
export const MEE_MAX_WINDOW_SECONDS = 600;
export const MEE_MAX_END_AHEAD_SECONDS = 900;
/** A window may open this far in the future at most (the node's clock may lead Patron's). */
export const MEE_MAX_START_AHEAD_SECONDS = 120;

/** The tank a quote is to be paid from, as the sign endpoint found it. */
export interface QuoteTank {
  readonly chainId: number;
  readonly address: Address;
  readonly token: Address;
  readonly meeVersion: MeeVersion;
}

/** What a checked quote lets Patron sign, and what its policies and ledger are told. */
export interface CheckedQuote {
  readonly paymentOp: QuotedOp;
  /** The payment op's EntryPoint v0.7 hash, recomputed. */
  readonly paymentHash: Hex;
  /** The lane the payment op's nonce key names (its allocation is checked by the caller, in the store). */
  readonly lane: number;
  /** The token base units the payment transfers to the node. */
  readonly amount: bigint;
  readonly root: Hex;
  /** The proof of leaf 0 (the payment op) in the root's tree. */
  readonly proof: readonly Hex[];
  /** The user's ops (every leaf but the payment). */
  readonly userOps: readonly QuotedOp[];
}

const refuse = (...args: ConstructorParameters<typeof MeeQuoteRefusedError>): never => {
  throw new MeeQuoteRefusedError(...args);
};

/**
 * Every check a quote meets before the tank's owner signs its root, none trusting a hash or a claim the quote makes:
 * each op's userOpHash is recomputed from its fields, EntryPoint v0.7 and chain, each leaf from that hash and its
 * window, the root from the leaves; the payment op is leaf 0, on the tank's chain, sent by the tank with Patron's
 * nonce key, paid for by a paymaster, its call exactly one transfer of the tank's token to a node Patron trusts; no
 * other leaf is sent by any tank Patron holds on any chain (the one signature authorises every leaf whose sender is
 * the tank); its window is bounded. Throws MeeQuoteRefusedError; pure (the nonce lane, the policies and the ledger
 * are the caller's).
 */
export function checkMeeQuote(args: {
  readonly quote: MeeQuote;
  readonly tank: QuoteTank;
  /** Every tank address Patron holds, on any chain, lower-case. */
  readonly tankAddresses: ReadonlySet<string>;
  /** The MEE nodes the payment may go to, lower-case (PATRON_MEE_NODES). */
  readonly trustedNodes: ReadonlySet<string>;
  readonly entryPoint: Address;
  readonly nowSeconds: number;
}): CheckedQuote {
  const { quote, tank } = args;
  const info = quote.paymentInfo;
  if (
    !isAddressEqual(info.sender, tank.address) ||
    info.chainId !== tank.chainId ||
    !isAddressEqual(info.token, tank.token)
  ) {
    refuse(
      'tank_mismatch',
      `the quote's payment is not from tank ${tank.address}'s token ${tank.token} on chain ${tank.chainId}`,
    );
  }
  const leaves = quote.userOps.map((op, i) => leafOf(op, i, args.entryPoint));
  const tree = merkleOf(leaves.map((l) => l.leaf));
  if (tree.root.toLowerCase() !== quote.hash.toLowerCase()) {
    refuse('root_mismatch', `the ops' leaves make root ${tree.root}, not the quote's hash ${quote.hash}`);
  }
  const [payment, ...userOps] = quote.userOps;
  const paymentHash = leaves[0]?.userOpHash;
  if (payment === undefined || paymentHash === undefined) return refuse('payment_op', 'the quote has no op');
  checkPaymentOp(payment, tank);
  userOps.forEach((op, i) => {
    if (args.tankAddresses.has(op.userOp.sender.toLowerCase())) {
      refuse('tank_op', `op ${i + 1} is sent by a gas tank (${op.userOp.sender}): only leaf 0 may spend from a tank`);
    }
  });
  const lane = laneOfNonce({ nonce: payment.userOp.nonce, validator: MEE_VERSIONS[tank.meeVersion].validator });
  if (lane === undefined) {
    refuse('nonce_unknown', "the payment op's nonce key is not one Patron's nonce endpoint gives for this tank");
  }
  const transfer = decodePaymentTransfer({
    callData: payment.userOp.callData,
    meeVersion: tank.meeVersion,
    token: tank.token,
  });
  if (typeof transfer === 'string') return refuse('payment_call', transfer);
  if (!isAddressEqual(transfer.to, quote.node)) {
    refuse('payment_call', `the payment goes to ${transfer.to}, not the quote's node ${quote.node}`);
  }
  if (transfer.amount !== info.tokenWeiAmount || transfer.amount === 0n) {
    refuse(
      'payment_call',
      `the payment transfers ${transfer.amount}, not the quote's tokenWeiAmount ${info.tokenWeiAmount}`,
    );
  }
  if (!args.trustedNodes.has(quote.node.toLowerCase())) {
    refuse('node_not_trusted', `the payment goes to node ${quote.node}, which is not in PATRON_MEE_NODES`);
  }
  checkWindow(payment, args.nowSeconds);
  return {
    paymentOp: payment,
    paymentHash,
    lane: lane ?? 0,
    amount: transfer.amount,
    root: tree.root,
    proof: tree.proofOf(0),
    userOps,
  };
}

function leafOf(op: QuotedOp, index: number, entryPoint: Address): { readonly leaf: Hex; readonly userOpHash: Hex } {
  const userOpHash = userOpHashV07({ op: op.userOp, entryPoint, chainId: op.chainId });
  if (userOpHash.toLowerCase() !== op.userOpHash.toLowerCase()) {
    refuse('hash_mismatch', `op ${index}'s userOpHash is not the hash of its fields on chain ${op.chainId}`);
  }
  const mee = meeUserOpHash({ userOpHash, lower: op.lowerBoundTimestamp, upper: op.upperBoundTimestamp });
  if (mee.toLowerCase() !== op.meeUserOpHash.toLowerCase()) {
    refuse('hash_mismatch', `op ${index}'s meeUserOpHash is not the hash of its userOpHash and window`);
  }
  return { leaf: op.shortEncoding === true ? userOpHash : mee, userOpHash };
}

function checkPaymentOp(payment: QuotedOp, tank: QuoteTank): void {
  const op = payment.userOp;
  if (!isAddressEqual(op.sender, tank.address) || payment.chainId !== tank.chainId) {
    refuse('payment_op', `leaf 0 is not the tank's payment op (sender ${op.sender} on chain ${payment.chainId})`);
  }
  // The tank is deployed before it sponsors (abstractjs sends no initCode for it); a deployment would run a factory.
  if (size(op.initCode ?? '0x') > 0 || payment.eip7702Auth !== undefined) {
    refuse('payment_op', 'the payment op deploys or delegates the tank');
  }
  // Without a paymaster the tank itself would pay the op's gas in native coin, at limits the quote chose.
  if (size(op.paymasterAndData ?? '0x') < 52) refuse('payment_op', 'the payment op names no paymaster to pay its gas');
  // A short-encoded leaf is the bare userOpHash: the validator would not bind the op to its window.
  if (payment.shortEncoding === true) refuse('payment_op', 'the payment op is short-encoded (no window)');
}

function checkWindow(payment: QuotedOp, now: number): void {
  const lower = payment.lowerBoundTimestamp;
  const upper = payment.upperBoundTimestamp;
  if (upper <= lower || upper <= now) refuse('window', `the payment op's window [${lower}, ${upper}] is empty or over`);
  if (upper - lower > MEE_MAX_WINDOW_SECONDS) {
    refuse('window', `the payment op's window lasts ${upper - lower} s, longer than ${MEE_MAX_WINDOW_SECONDS} s`);
  }
  if (upper - now > MEE_MAX_END_AHEAD_SECONDS) {
    refuse(
      'window',
      `the payment op's window ends ${upper - now} s from now, more than ${MEE_MAX_END_AHEAD_SECONDS} s`,
    );
  }
  if (lower - now > MEE_MAX_START_AHEAD_SECONDS) {
    refuse(
      'window',
      `the payment op's window opens ${lower - now} s from now, more than ${MEE_MAX_START_AHEAD_SECONDS} s`,
    );
  }
}

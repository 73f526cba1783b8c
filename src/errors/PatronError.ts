/**
 * The one base error of the project, shaped after viem's BaseError: a short message meant for the caller,
 * optional details and cause for the log, and a stable `code` that the transport layers map to the wire
 * (HTTP status in the REST API, JSON-RPC error code in the RPC API). Domain code throws these; only the edge
 * decides how they look on the wire.
 */
export type PatronErrorCode =
  | 'VALIDATION'
  | 'UNAUTHORIZED'
  /** Authenticated, but the request may not be made this way (a cookie-authenticated write without its CSRF token). */
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'LIMIT_EXCEEDED'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNAVAILABLE'
  | 'INTERNAL'
  /** The dApp's webhook answered that this operation is not to be sponsored. */
  | 'SPONSORSHIP_DENIED'
  /** The dApp's webhook could not give a verdict (timeout, error status, malformed answer): fail closed. */
  | 'WEBHOOK_FAILED'
  /** Simulating the user operation on chain failed (validation or execution would revert). */
  | 'SIMULATION_FAILED'
  /** A well-formed request for something Patron does not do (a mode, an EntryPoint, a dialect). */
  | 'UNSUPPORTED'
  /** The dApp does not serve the chain, or the chain is not configured. */
  | 'CHAIN_NOT_SERVED'
  /** Token mode: the account cannot pay the fee (balance or approval below what the op may be charged). */
  | 'TOKEN_PAYMENT'
  /** The op's fees or gas are beyond what Patron signs (the signing bounds). */
  | 'OUT_OF_BOUNDS'
  /** A sponsorship policy of the dApp denies the op (a rule, or a cap that is spent). */
  | 'POLICY_DENIED'
  /** The chain's current fees cannot be read, so no op can be bounded: nothing is signed (transient). */
  | 'FEES_UNAVAILABLE'
  /** A rate limit is spent: retry after `retryAfterSeconds` (docs/guides/rate-limits.md, "Rate limits"). */
  | 'RATE_LIMITED'
  /** The paymaster's deposit on the chain is below its live liabilities × margin or the floor (src/solvency/). */
  | 'INSOLVENT'
  /** The paymaster no longer accepts this service's signing key (its owner removed it): nothing is signed for it. */
  | 'SIGNER_NOT_ACCEPTED'
  /** The dApp's owner does not let this caller (its origin, IP or method family) use the API key. */
  | 'CALLER_NOT_ALLOWED'
  /** The dApp requires a sponsorship token from its backend and this call has none, or one that does not hold. */
  | 'SPONSORSHIP_TOKEN'
  /** The storage cannot take this request now (disk full, read-only, locked, unreachable): transient, retried. */
  | 'STORAGE_UNAVAILABLE';

export interface PatronErrorOptions {
  readonly details?: string;
  readonly cause?: unknown;
  readonly data?: Readonly<Record<string, unknown>>;
}

export class PatronError extends Error {
  override name = 'PatronError';
  readonly code: PatronErrorCode;
  /** The message safe to show to a caller; never contains internals. */
  readonly shortMessage: string;
  readonly details: string | undefined;
  /** Machine-readable detail safe to show to the caller (JSON-RPC `error.data`). */
  readonly data: Readonly<Record<string, unknown>> | undefined;

  constructor(code: PatronErrorCode, shortMessage: string, options: PatronErrorOptions = {}) {
    super(options.details === undefined ? shortMessage : `${shortMessage}\n\nDetails: ${options.details}`, {
      cause: options.cause,
    });
    this.code = code;
    this.shortMessage = shortMessage;
    this.details = options.details;
    this.data = options.data;
  }

  /** Walks the cause chain and returns the first error that matches, like viem's `walk()`. */
  walk(predicate: (err: unknown) => boolean): unknown {
    let current: unknown = this;
    const seen = new Set<unknown>();
    while (current !== undefined && current !== null && !seen.has(current)) {
      if (predicate(current)) return current;
      seen.add(current);
      current = current instanceof Error ? current.cause : undefined;
    }
    return undefined;
  }
}

export class ValidationError extends PatronError {
  override name = 'ValidationError' as const;
  constructor(message: string, options?: PatronErrorOptions) {
    super('VALIDATION', message, options);
  }
}

/**
 * A user operation the domain cannot work with as sent: `field` names the op's field (undefined: the op as a
 * whole), `problem` says what is wrong. The domain does not know where the op sits in a request; the transport
 * that parsed it says so (the JSON-RPC edge: `Invalid params: params[0].maxFeePerGas: …`, rpc/rpcErrors.ts).
 */
export class OperationFieldError extends PatronError {
  override name = 'OperationFieldError' as const;
  readonly field: string | undefined;
  readonly problem: string;
  constructor(field: string | undefined, problem: string, options?: PatronErrorOptions) {
    const what = field === undefined ? 'The user operation' : `The user operation's ${field}`;
    super('VALIDATION', `${what}: ${problem}`, options);
    this.field = field;
    this.problem = problem;
  }
}

export class UnauthorizedError extends PatronError {
  override name = 'UnauthorizedError' as const;
  constructor(message: string, options?: PatronErrorOptions) {
    super('UNAUTHORIZED', message, options);
  }
}

export class ForbiddenError extends PatronError {
  override name = 'ForbiddenError' as const;
  constructor(message: string, options?: PatronErrorOptions) {
    super('FORBIDDEN', message, options);
  }
}

export class NotFoundError extends PatronError {
  override name = 'NotFoundError' as const;
  constructor(message: string, options?: PatronErrorOptions) {
    super('NOT_FOUND', message, options);
  }
}

export class LimitExceededError extends PatronError {
  override name = 'LimitExceededError' as const;
  constructor(message: string, options?: PatronErrorOptions) {
    super('LIMIT_EXCEEDED', message, options);
  }
}

/** A rate limit is spent. `limit` names it (`calls.perKey`, `signIn.perIp`, …); the caller may retry after. */
export class RateLimitedError extends PatronError {
  override name = 'RateLimitedError' as const;
  readonly retryAfterSeconds: number;
  constructor(args: { limit: string; what: string; retryAfterSeconds: number }) {
    super('RATE_LIMITED', `Rate limit exceeded: too many ${args.what}; retry in ${args.retryAfterSeconds} s`, {
      data: { limit: args.limit, retryAfterSeconds: args.retryAfterSeconds },
    });
    this.retryAfterSeconds = args.retryAfterSeconds;
  }
}

export class ConflictError extends PatronError {
  override name = 'ConflictError' as const;
  constructor(message: string, options?: PatronErrorOptions) {
    super('CONFLICT', message, options);
  }
}

export class SponsorshipDeniedError extends PatronError {
  override name = 'SponsorshipDeniedError' as const;
  constructor(message: string, options?: PatronErrorOptions) {
    super('SPONSORSHIP_DENIED', message, options);
  }
}

export class WebhookFailedError extends PatronError {
  override name = 'WebhookFailedError' as const;
  constructor(
    message: string,
    readonly reason: string,
    options?: PatronErrorOptions,
  ) {
    super('WEBHOOK_FAILED', message, options);
  }
}

export class SimulationFailedError extends PatronError {
  override name = 'SimulationFailedError' as const;
  constructor(
    message: string,
    /** The EntryPoint's reason (e.g. "AA23 reverted (or OOG)") or the decoded revert of the account's call. */
    readonly reason: string,
    options?: PatronErrorOptions,
  ) {
    super('SIMULATION_FAILED', message, options);
  }
}

export class UnsupportedError extends PatronError {
  override name = 'UnsupportedError' as const;
  constructor(message: string, options?: PatronErrorOptions) {
    super('UNSUPPORTED', message, options);
  }
}

export class TokenPaymentError extends PatronError {
  override name = 'TokenPaymentError' as const;
  constructor(message: string, options?: PatronErrorOptions) {
    super('TOKEN_PAYMENT', message, options);
  }
}

export class ChainNotServedError extends PatronError {
  override name = 'ChainNotServedError' as const;
  constructor(message: string, options?: PatronErrorOptions) {
    super('CHAIN_NOT_SERVED', message, options);
  }
}

export class UnavailableError extends PatronError {
  override name = 'UnavailableError' as const;
  constructor(message: string, options?: PatronErrorOptions) {
    super('UNAVAILABLE', message, options);
  }
}

/**
 * The storage refused what this request needed (src/store/db/storageFault.ts names the kind): the caller is told it
 * is transient and when to retry; the operator's log line (storageHealth.ts) has the cause and the path.
 */
export class StorageUnavailableError extends PatronError {
  override name = 'StorageUnavailableError' as const;
  readonly retryAfterSeconds: number;
  constructor(args: { kind: string; text: string; retryAfterSeconds: number; cause: unknown }) {
    super(
      'STORAGE_UNAVAILABLE',
      `Patron's storage is unavailable (${args.text}); retry in ${args.retryAfterSeconds} s`,
      {
        cause: args.cause,
        data: { rule: 'storage', kind: args.kind, retryAfterSeconds: args.retryAfterSeconds },
      },
    );
    this.retryAfterSeconds = args.retryAfterSeconds;
  }
}

/** The signing bound an op broke (docs/guides/signing-bounds.md, "Signing bounds"). */
export type BoundsRule =
  | 'maxFeePerGas'
  | 'maxPriorityFeePerGas'
  | 'callGasLimit'
  | 'verificationGasLimit'
  | 'preVerificationGas'
  /** preVerificationGas above what the op's size needs (Patron's figure × the multiplier + the slack). */
  | 'preVerificationGasForSize'
  /** The most unused-gas penalty the op can pay (EntryPoint v0.7+), at its limits or caps. */
  | 'unusedGasPenalty'
  | 'maxOpCost';

/** How a refusal's message names its rule, where the rule's name alone would not say it. */
const BOUNDS_RULE_WORDS: Partial<Record<BoundsRule, string>> = {
  maxOpCost: "the op's worst-case cost",
  preVerificationGasForSize: "preVerificationGas (for the op's size)",
  unusedGasPenalty: "the op's most unused-gas penalty",
};

export class BoundsExceededError extends PatronError {
  override name = 'BoundsExceededError' as const;
  readonly rule: BoundsRule;
  constructor(v: {
    rule: BoundsRule;
    value: bigint;
    bound: bigint;
    unit: string;
    /** Context of the bound (the chain's baseFee or tip), as decimal strings. */
    extra?: Readonly<Record<string, string>>;
  }) {
    const what = BOUNDS_RULE_WORDS[v.rule] ?? v.rule;
    super(
      'OUT_OF_BOUNDS',
      `Out of bounds: ${what} ${v.value} ${v.unit} is above the bound ${v.bound}; Patron does not sign it`,
      {
        data: { rule: v.rule, value: v.value.toString(), bound: v.bound.toString(), unit: v.unit, ...v.extra },
      },
    );
    this.rule = v.rule;
  }
}

export class FeesUnavailableError extends PatronError {
  override name = 'FeesUnavailableError' as const;
  constructor(chainId: number) {
    super('FEES_UNAVAILABLE', `Chain ${chainId}: its current fees cannot be read, so Patron signs nothing; try again`, {
      data: { rule: 'chainFees', chainId },
    });
  }
}

/**
 * A dApp's sponsorship policy denied the op. `data` is the machine-readable denial (src/policies/policyRules.ts
 * PolicyDenial, amounts as strings): the policy, the rule, and for a cap its scope, unit, limit, what is used and
 * reserved, and when it resets.
 */
export class PolicyDeniedError extends PatronError {
  override name = 'PolicyDeniedError' as const;
  readonly rule: string;
  constructor(message: string, data: Readonly<Record<string, unknown>> & { readonly rule: string }) {
    super('POLICY_DENIED', `Sponsorship denied by policy: ${message}`, { data });
    this.rule = data.rule;
  }
}

/**
 * The solvency guard (src/solvency/README.md) holds signing on a chain: the paymaster's EntryPoint deposit is below
 * the floor, or below what the signatures still open may cost times the margin. Every op signed now could fail
 * on chain (AA31) or drain the deposit for ops already promised. `data` carries the amounts as decimal strings.
 */
export class PaymasterInsolventError extends PatronError {
  override name = 'PaymasterInsolventError' as const;
  constructor(v: { chainId: number; depositWei: bigint; liabilitiesWei: bigint; floorWei: bigint; marginBps: bigint }) {
    const required = (v.liabilitiesWei * v.marginBps + 9_999n) / 10_000n;
    const why =
      v.depositWei < v.floorWei
        ? `the paymaster's deposit (${v.depositWei} wei) is below its floor (${v.floorWei} wei)`
        : `the paymaster's deposit (${v.depositWei} wei) is below its live liabilities × margin (${required} wei)`;
    super('INSOLVENT', `Chain ${v.chainId}: ${why}; Patron signs nothing on this chain until it is topped up`, {
      data: {
        rule: 'solvency',
        chainId: v.chainId,
        depositWei: v.depositWei.toString(),
        liabilitiesWei: v.liabilitiesWei.toString(),
        floorWei: v.floorWei.toString(),
      },
    });
  }
}

/**
 * The paymaster's owner removed this service's key from the paymaster's signers (or never added it): whatever
 * Patron signed would fail on chain (AA34), so it signs nothing for that paymaster until the key is accepted again
 * (src/paymaster/signer/signerWatch.ts). An operator's fault, not the caller's: transient, as the insolvent one.
 */
export class SignerNotAcceptedError extends PatronError {
  override name = 'SignerNotAcceptedError' as const;
  constructor(v: { chainId: number; paymaster: string; signer: string }) {
    super(
      'SIGNER_NOT_ACCEPTED',
      `Chain ${v.chainId}: the paymaster ${v.paymaster} does not accept Patron's signing key ${v.signer}; Patron signs nothing for it until its owner adds the key again`,
      { data: { rule: 'signer', chainId: v.chainId, paymaster: v.paymaster, signer: v.signer } },
    );
  }
}

const CALLER_RULE_TEXT = {
  origin: "the request's Origin is not among the key's allowed origins",
  ip: "the client IP is outside the key's allowed ranges",
  method: 'the key may not call this method family',
} as const;

/**
 * The dApp's owner restricted who may use its API key (docs/guides/security-keys.md) and this call breaks `rule`.
 * Decided right after the key resolves, before any work; `data.rule` names the rule for the caller and the
 * metrics, and the message (the request log's reason) names it too.
 */
export class CallerNotAllowedError extends PatronError {
  override name = 'CallerNotAllowedError' as const;
  readonly rule: keyof typeof CALLER_RULE_TEXT;
  constructor(args: { rule: keyof typeof CALLER_RULE_TEXT; family?: string | undefined }) {
    super('CALLER_NOT_ALLOWED', `Caller not allowed (rule ${args.rule}): ${CALLER_RULE_TEXT[args.rule]}`, {
      data: {
        rule: args.rule,
        ...(args.rule === 'method' && args.family !== undefined ? { family: args.family } : {}),
      },
    });
    this.rule = args.rule;
  }
}

/**
 * The dApp's sponsorship token (docs/guides/sponsorship-tokens.md) is missing where the dApp requires one, or does
 * not hold: `reason` is the refusal's stable name (sponsorshipTokens/tokenRefusal.ts, `token_required` for a
 * missing one), in `data.reason` for the caller and in the request log and the metrics' rule; the message says what
 * is wrong and never shows the token or key material.
 */
export class SponsorshipTokenError extends PatronError {
  override name = 'SponsorshipTokenError' as const;
  readonly reason: string;
  constructor(args: { reason: string; message: string }) {
    super('SPONSORSHIP_TOKEN', `Sponsorship token refused (${args.reason}): ${args.message}`, {
      data: { reason: args.reason },
    });
    this.reason = args.reason;
  }
}

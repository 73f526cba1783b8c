import { OperationFieldError, PatronError, type PatronErrorCode } from '../errors/PatronError.js';
import { storageUnavailable } from '../store/db/storageFault.js';

/**
 * JSON-RPC error codes of the paymaster endpoints: a stable, documented table (docs/reference/json-rpc.md, "JSON-RPC errors").
 * -32700..-32603 are JSON-RPC 2.0's own; -32001..-32043 are Patron's, inside the server range.
 *
 * HTTP status: deterministic failures of a single request are answered with HTTP 400 (401 for a bad API key)
 * and the JSON-RPC error in the body, because `@biconomy/paymaster@4` / `@biconomy/account@4` only read an
 * error body on a non-2xx status, while viem surfaces the body's message either way. viem *retries* HTTP
 * 408/413/429/500/502/503/504 and codes -1/-32005/-32603, so those are reserved for transient faults.
 */
export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  UNAUTHORIZED: -32001,
  CHAIN_NOT_SERVED: -32002,
  CALLER_NOT_ALLOWED: -32003,
  NOT_FOUND: -32004,
  RATE_LIMITED: -32005,
  SPONSORSHIP_DENIED: -32010,
  WEBHOOK_FAILED: -32011,
  POLICY_DENIED: -32012,
  SPONSORSHIP_TOKEN: -32013,
  SIMULATION_FAILED: -32020,
  TOKEN_PAYMENT: -32021,
  UNSUPPORTED: -32030,
  OUT_OF_BOUNDS: -32040,
  FEES_UNAVAILABLE: -32041,
  INSOLVENT: -32042,
  SIGNER_NOT_ACCEPTED: -32043,
  STORAGE_UNAVAILABLE: -32050,
} as const;

export interface RpcErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

const BY_DOMAIN_CODE: Record<PatronErrorCode, { code: number; http: number }> = {
  VALIDATION: { code: RPC.INVALID_PARAMS, http: 400 },
  UNAUTHORIZED: { code: RPC.UNAUTHORIZED, http: 401 },
  FORBIDDEN: { code: RPC.UNAUTHORIZED, http: 403 },
  CHAIN_NOT_SERVED: { code: RPC.CHAIN_NOT_SERVED, http: 400 },
  NOT_FOUND: { code: RPC.NOT_FOUND, http: 400 },
  CONFLICT: { code: RPC.INVALID_PARAMS, http: 400 },
  LIMIT_EXCEEDED: { code: RPC.RATE_LIMITED, http: 429 },
  SPONSORSHIP_DENIED: { code: RPC.SPONSORSHIP_DENIED, http: 400 },
  WEBHOOK_FAILED: { code: RPC.WEBHOOK_FAILED, http: 400 },
  SIMULATION_FAILED: { code: RPC.SIMULATION_FAILED, http: 400 },
  UNSUPPORTED: { code: RPC.UNSUPPORTED, http: 400 },
  TOKEN_PAYMENT: { code: RPC.TOKEN_PAYMENT, http: 400 },
  OUT_OF_BOUNDS: { code: RPC.OUT_OF_BOUNDS, http: 400 },
  POLICY_DENIED: { code: RPC.POLICY_DENIED, http: 400 },
  // 503: transient, and viem retries it; the message is Patron's own, so it is shown.
  FEES_UNAVAILABLE: { code: RPC.FEES_UNAVAILABLE, http: 503 },
  // 503 like the above: signing resumes once the operator tops the deposit up; the message says so.
  INSOLVENT: { code: RPC.INSOLVENT, http: 503 },
  // 503 like the above: the operator's fault (a rotation half done), cleared when the key is accepted again.
  SIGNER_NOT_ACCEPTED: { code: RPC.SIGNER_NOT_ACCEPTED, http: 503 },
  // 403: the key is valid but this caller may not use it (the owner's origins, IP ranges, method families).
  CALLER_NOT_ALLOWED: { code: RPC.CALLER_NOT_ALLOWED, http: 403 },
  // 401: the sponsorship token is the end user's credential for this call; missing or refused, the call is not
  // authorised (a client can tell it from a bad API key, -32001, by the code and data.reason).
  SPONSORSHIP_TOKEN: { code: RPC.SPONSORSHIP_TOKEN, http: 401 },
  // 429 with Retry-After: viem retries it (with backoff), which is what a client over its budget should do.
  RATE_LIMITED: { code: RPC.RATE_LIMITED, http: 429 },
  PAYLOAD_TOO_LARGE: { code: RPC.INVALID_REQUEST, http: 413 },
  UNSUPPORTED_MEDIA_TYPE: { code: RPC.INVALID_REQUEST, http: 415 },
  UNAVAILABLE: { code: RPC.INTERNAL_ERROR, http: 503 },
  // 503 with Retry-After: the storage's fault (disk full, read-only, unreachable), transient; viem retries it.
  STORAGE_UNAVAILABLE: { code: RPC.STORAGE_UNAVAILABLE, http: 503 },
  INTERNAL: { code: RPC.INTERNAL_ERROR, http: 500 },
};

/** Every method that takes a user operation takes it first (both dialects, ERC-7677): where its fields are. */
const OPERATION_PARAM = 'params[0]';

/** The caller's message; an op field the domain refused is named where the request put it. */
function message(err: PatronError): string {
  if (!(err instanceof OperationFieldError)) return err.shortMessage;
  const where = err.field === undefined ? OPERATION_PARAM : `${OPERATION_PARAM}.${err.field}`;
  return `Invalid params: ${where}: ${err.problem}`;
}

/** Maps any thrown value to a JSON-RPC error and the HTTP status a lone request would get. */
export function toRpcError(thrown: unknown): { error: RpcErrorObject; http: number; internal: boolean } {
  // A driver's error that names a storage fault is the caller's transient 503, not an internal error.
  const err = storageUnavailable(thrown) ?? thrown;
  if (err instanceof PatronError) {
    const m = BY_DOMAIN_CODE[err.code];
    const internal = m.code === RPC.INTERNAL_ERROR;
    const reason = (err as { reason?: unknown }).reason;
    const data = internal ? undefined : (err.data ?? (typeof reason === 'string' ? { reason } : undefined));
    return {
      error: {
        code: m.code,
        message: internal ? 'Internal error' : message(err),
        ...(data === undefined ? {} : { data }),
      },
      http: m.http,
      internal,
    };
  }
  return { error: { code: RPC.INTERNAL_ERROR, message: 'Internal error' }, http: 500, internal: true };
}

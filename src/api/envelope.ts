import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { PatronError, type PatronErrorCode, StorageUnavailableError } from '../errors/PatronError.js';
import { storageUnavailable } from '../store/db/storageFault.js';

/**
 * The one REST envelope (spec §4.1): every response body is `{statusCode, message}` plus `data` where there is
 * any. Errors are mapped to HTTP here, at the edge, and nowhere else.
 */
export const envelopeSchema = z.object({
  statusCode: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});
export type Envelope = z.infer<typeof envelopeSchema>;

const STATUS_BY_CODE: Record<PatronErrorCode, number> = {
  VALIDATION: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  TOKEN_PAYMENT: 400,
  LIMIT_EXCEEDED: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNAVAILABLE: 503,
  INTERNAL: 500,
  SPONSORSHIP_DENIED: 403,
  WEBHOOK_FAILED: 502,
  SIMULATION_FAILED: 400,
  UNSUPPORTED: 400,
  CHAIN_NOT_SERVED: 400,
  OUT_OF_BOUNDS: 400,
  POLICY_DENIED: 403,
  FEES_UNAVAILABLE: 503,
  INSOLVENT: 503,
  SIGNER_NOT_ACCEPTED: 503,
  CALLER_NOT_ALLOWED: 403,
  SPONSORSHIP_TOKEN: 401,
  RATE_LIMITED: 429,
  STORAGE_UNAVAILABLE: 503,
};

export function sendOk(reply: FastifyReply, message: string, data?: unknown): FastifyReply {
  const body: Envelope = data === undefined ? { statusCode: 200, message } : { statusCode: 200, message, data };
  return reply.code(200).send(body);
}

export function sendError(reply: FastifyReply, statusCode: number, message: string): FastifyReply {
  const body: Envelope = { statusCode, message };
  return reply.code(statusCode).send(body);
}

/** Fastify's own 4xx errors (body parsing, routing) rewritten into clear messages. */
const FASTIFY_ERRORS: Record<string, { status: number; message: (limit: number) => string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: () => 'Unsupported content type: send application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: () => 'Content-Length does not match the body' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: (limit) => `Request body is larger than ${limit} bytes` },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, message: () => 'Request body must be a JSON object' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, message: () => 'Malformed JSON in request body' },
};

export interface HttpError {
  readonly statusCode: number;
  readonly message: string;
  /** True when the cause is ours (a bug or an outage) and must be logged with its stack. */
  readonly internal: boolean;
  /** A transient refusal's Retry-After (seconds). */
  readonly retryAfterSeconds?: number;
}

export function toHttpError(thrown: unknown, bodyLimit: number): HttpError {
  // A driver's error that names a storage fault: 503 with its own message (transient, not a bug of ours).
  const err = storageUnavailable(thrown) ?? thrown;
  if (err instanceof StorageUnavailableError) {
    return { statusCode: 503, message: err.shortMessage, internal: false, retryAfterSeconds: err.retryAfterSeconds };
  }
  if (err instanceof PatronError) {
    const statusCode = STATUS_BY_CODE[err.code];
    return {
      statusCode,
      message: statusCode >= 500 ? 'Internal server error' : err.shortMessage,
      internal: statusCode >= 500,
    };
  }
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  const known = typeof code === 'string' ? FASTIFY_ERRORS[code] : undefined;
  if (known !== undefined) return { statusCode: known.status, message: known.message(bodyLimit), internal: false };
  const status = typeof err === 'object' && err !== null ? (err as { statusCode?: unknown }).statusCode : undefined;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { statusCode: status, message: 'Bad request', internal: false };
  }
  return { statusCode: 500, message: 'Internal server error', internal: true };
}

import { randomFillSync } from 'node:crypto';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type Dispatcher, Pool } from 'undici';
import type { SecretBox } from '../crypto/secretBox.js';
import type { WebhookRecord } from '../store/records.js';
import { pinnedLookup } from './pinnedLookup.js';
import { signStandardWebhook } from './standardWebhooks.js';
import { parseVerdictBody, withGetData } from './webhookMessage.js';
import type { WebhookOperationJson } from './webhookOperation.js';
import { assertPublicHost, type HostResolver } from './webhookUrlPolicy.js';

export { generateSigningSecret, verifyStandardWebhookSignature } from './standardWebhooks.js';
export { GET_DATA_PARAMETER, withGetData } from './webhookMessage.js';

/**
 * The outbound webhook call (spec §6): asks a dApp's webhook whether to sponsor a user operation. Fails closed:
 * anything but a well-formed `true` within the time limit is a refusal, reported as a verdict with its reason.
 * Calls are signed per Standard Webhooks (https://www.standardwebhooks.com/, see standardWebhooks.ts).
 */

/** What the caller needs of a webhook: where, how, and its sealed signing secret. */
export type SignableWebhook = Pick<WebhookRecord, 'id' | 'url' | 'requestType'> & {
  readonly signingSecretCiphertext: string;
};

export type WebhookFailureReason =
  | 'denied'
  | 'timeout'
  | 'http_status'
  | 'redirect'
  | 'invalid_response'
  | 'response_too_large'
  | 'connection_failed'
  | 'forbidden_address';

export type WebhookVerdict =
  | { readonly verified: true; readonly latencyMs: number; readonly status: number }
  | {
      readonly verified: false;
      readonly reason: WebhookFailureReason;
      readonly latencyMs: number;
      readonly status?: number;
    };

export interface WebhookCallerLogger {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export interface WebhookCallerOptions {
  /** Whole-call budget: DNS, connect, TLS, headers and body. */
  readonly timeoutMs?: number;
  readonly maxResponseBytes?: number;
  /** Dev mode: loopback/private addresses may be called. Production refuses them at call time too. */
  readonly allowPrivate: boolean;
  readonly resolve: HostResolver;
  readonly secretBox: SecretBox;
  /** Clock for `webhook-timestamp` (milliseconds). Latency uses the monotonic clock instead. */
  readonly now?: () => number;
  readonly logger: WebhookCallerLogger;
}

export interface WebhookCaller {
  /**
   * Calls the webhook and returns its verdict. Rejects only for Patron's own faults (an unreadable sealed
   * secret, `webhookData` that is not JSON-serialisable, an operation for a GET webhook, a closed caller); every
   * fault of the receiver is a verdict. `operation` is sent beside `data` (a webhook with includeOperation).
   */
  call(args: {
    webhook: SignableWebhook;
    webhookData: Record<string, unknown>;
    operation?: WebhookOperationJson | undefined;
  }): Promise<WebhookVerdict>;
  close(): Promise<void>;
}

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 2000;
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
export const WEBHOOK_USER_AGENT = 'Patron-Webhooks/1';
/** Bound on pooled origins; the least recently used pool is closed beyond it. */
const MAX_POOLS = 1024;
const MAX_CONNECTIONS_PER_ORIGIN = 64;
/** Bound on the small per-URL and per-secret memos of the hot path (each is cleared when full). */
const MAX_MEMO_ENTRIES = 1024;

type Outcome =
  | { readonly verified: true; readonly status: number }
  | { readonly reason: WebhookFailureReason; readonly status?: number };

/** Maps a transport error to a reason. An abort by our own deadline is checked before this (it is 'timeout'). */
function classifyError(err: unknown): WebhookFailureReason {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return 'timeout';
  }
  if (code === 'UND_ERR_HEADERS_OVERFLOW') return 'response_too_large';
  if (typeof code === 'string' && (code.startsWith('HPE_') || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH')) {
    return 'invalid_response';
  }
  return 'connection_failed';
}

/** A non-2xx answer's body is read and dropped up to this size (so the connection can be reused), then cut. */
const DISCARDED_BODY_LIMIT = 16 * 1024;

/**
 * One call's deadline: the whole budget (DNS, connect, headers, body) is one timer. When it fires, the phase in
 * progress is cancelled through `cancel` (the DNS wait, or the HTTP exchange). Cheaper than an AbortSignal,
 * whose listeners undici would add and remove on every request.
 */
interface InFlight {
  timedOut: boolean;
  cancel: ((err: Error) => void) | undefined;
}

const timedOutError = () => new Error('webhook call timed out');

/** Rejects when the deadline passes first (a resolver need not support cancellation). */
function untilDeadline<T>(promise: Promise<T>, call: InFlight): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (call.timedOut) return reject(timedOutError());
    call.cancel = reject;
    promise.then(resolve, reject).finally(() => {
      if (call.cancel === reject) call.cancel = undefined;
    });
  });
}

/** What a call needs of its URL, parsed once per distinct URL string (see `target`). */
interface Target {
  readonly origin: string;
  /** `url.hostname` as the SSRF guard takes it (IPv6 literals keep their brackets). */
  readonly hostname: string;
  /** The host without IPv6 brackets, what a resolver is asked. */
  readonly host: string;
  readonly isIpLiteral: boolean;
  /** Path and query, as undici's request(url) would send them (no fragment). */
  readonly path: string;
}

function parseTarget(raw: string): Target {
  const url = new URL(raw);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return {
    origin: url.origin,
    hostname: url.hostname,
    host,
    isIpLiteral: isIP(host) !== 0,
    path: url.search ? `${url.pathname}${url.search}` : url.pathname,
  };
}

/**
 * Message ids in newMessageId's format (`msg_` + base64url of 16 random bytes), drawn from a pool of CSPRNG
 * output refilled 256 ids at a time: one randomFillSync per call cost ~4 µs here, a slice of the pool ~0.3 µs.
 * Node's crypto.randomUUID() pools its randomness the same way.
 */
export function messageIds(): () => string {
  const ID_BYTES = 16;
  const pool = Buffer.alloc(ID_BYTES * 256);
  let offset = pool.length;
  return () => {
    if (offset === pool.length) {
      randomFillSync(pool);
      offset = 0;
    }
    const id = `msg_${pool.toString('base64url', offset, offset + ID_BYTES)}`;
    offset += ID_BYTES;
    return id;
  };
}

/** A bounded memo: a hit is one Map lookup; when full it starts over (entries are cheap to recompute). */
function memo<V>(compute: (key: string) => V): (key: string) => V {
  const entries = new Map<string, V>();
  return (key) => {
    let value = entries.get(key);
    if (value === undefined) {
      value = compute(key);
      if (entries.size >= MAX_MEMO_ENTRIES) entries.clear();
      entries.set(key, value);
    }
    return value;
  };
}

export function createWebhookCaller(options: WebhookCallerOptions): WebhookCaller {
  const timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const now = options.now ?? Date.now;
  const { logger, secretBox } = options;
  /** Keep-alive pools, one per origin and checked address set, in least-recently-used order. */
  const pools = new Map<string, Pool>();
  let closed = false;
  // Hot-path memos. A POST webhook's URL is the same string on every call, so it is parsed once. A sealed
  // signing secret is opened once per ciphertext (AES-GCM, ~10 µs): a rotation seals a new ciphertext, so a
  // rotated secret is never served from here; an unreadable one throws and is not remembered.
  const target = memo(parseTarget);
  const openSecret = memo((sealed) => secretBox.open(sealed));
  const newMessageId = messageIds();

  /**
   * The addresses to connect to (empty for an IP literal: nothing to resolve), or the failure. Every call
   * resolves through the injected resolver and, in production, refuses non-public answers with the same
   * `assertPublicHost` used at registration: DNS may have changed since (rebinding).
   */
  async function resolveTarget(t: Target, call: InFlight): Promise<string[] | Outcome> {
    // Dev mode and an IP literal: nothing to check, nothing to resolve.
    if (options.allowPrivate && t.isIpLiteral) return [];
    const resolved: string[] = [];
    let resolutionFailed = false;
    const capture: HostResolver = async (host) => {
      const addresses = await untilDeadline(options.resolve(host), call).catch((err: unknown) => {
        resolutionFailed = !call.timedOut;
        throw err;
      });
      if (addresses.length === 0) resolutionFailed = true;
      resolved.push(...addresses);
      return addresses;
    };
    try {
      if (!options.allowPrivate) await assertPublicHost(t.hostname, capture);
      else await capture(t.host);
    } catch (err) {
      if (call.timedOut) throw err;
      return { reason: resolutionFailed ? 'connection_failed' : 'forbidden_address' };
    }
    return resolutionFailed ? { reason: 'connection_failed' } : resolved;
  }

  function poolFor(origin: string, addresses: readonly string[]): Pool {
    const key = addresses.length === 0 ? `${origin} ` : `${origin} ${[...addresses].sort().join(',')}`;
    let pool = pools.get(key);
    if (pool !== undefined) pools.delete(key);
    else {
      pool = new Pool(origin, {
        connections: MAX_CONNECTIONS_PER_ORIGIN,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        // The origin keeps its host name, so the Host header, TLS SNI and certificate check use it; only the
        // address lookup is pinned to what was checked.
        connect: { timeout: timeoutMs, ...(addresses.length > 0 ? { lookup: pinnedLookup(addresses) } : {}) },
      });
      const oldest = pools.size >= MAX_POOLS ? pools.keys().next().value : undefined;
      if (oldest !== undefined) {
        void pools.get(oldest)?.close();
        pools.delete(oldest);
      }
    }
    pools.set(key, pool);
    return pool;
  }

  /**
   * Method, URL, body and Standard Webhooks headers. POST sends `{"data": webhookData}` (with `"operation"` after
   * it when given) and signs that body; GET sends webhookData in the query (see withGetData) and signs the empty
   * string as the body, as there is none. So a GET signature authenticates the sender, id and time, not the
   * query: prefer POST where that matters. For that reason an operation is never sent to a GET webhook (the
   * service refuses the option on one; reaching here with one is a bug, so it throws rather than drop it).
   */
  function buildRequest(
    webhook: SignableWebhook,
    webhookData: Record<string, unknown>,
    operation: WebhookOperationJson | undefined,
  ) {
    const isPost = webhook.requestType === 'POST';
    if (!isPost && operation !== undefined) throw new Error(`webhook ${webhook.id}: no operation on a GET webhook`);
    const body = !isPost
      ? ''
      : JSON.stringify(operation === undefined ? { data: webhookData } : { data: webhookData, operation });
    const url = isPost ? webhook.url : withGetData(webhook.url, webhookData);
    const id = newMessageId();
    const timestamp = Math.floor(now() / 1000);
    const secret = openSecret(webhook.signingSecretCiphertext);
    const signature = signStandardWebhook({ secret, id, timestamp, body });
    const headers: Record<string, string> = isPost
      ? {
          'user-agent': WEBHOOK_USER_AGENT,
          accept: 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signature,
          'content-type': 'application/json',
        }
      : {
          'user-agent': WEBHOOK_USER_AGENT,
          accept: 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signature,
        };
    return { url, isPost, method: webhook.requestType, headers, body: isPost ? body : null };
  }

  /**
   * The HTTP exchange through undici's dispatch API, reading the answer as it arrives: a 2xx body is kept up to
   * maxResponseBytes (a larger declared or actual body stops the exchange: response_too_large); a non-2xx
   * answer is a refusal by its status (redirects are never followed: the target was not checked, and a 3xx is
   * not an answer), its body read and dropped up to DISCARDED_BODY_LIMIT. Rejects with undici's error
   * (classified by the caller) or the deadline's. No response stream, no AbortSignal: this is every
   * sponsorship's webhook call, and those cost more CPU than the exchange itself (bench/README.md).
   */
  function exchange(pool: Pool, t: Target, req: ReturnType<typeof buildRequest>, call: InFlight): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      let status = 0;
      let size = 0;
      const chunks: Buffer[] = [];
      let settled = false;
      const settle = (outcome: Outcome) => {
        settled = true;
        call.cancel = undefined;
        resolve(outcome);
      };
      const refusal = (): Outcome => ({ reason: status >= 300 && status < 400 ? 'redirect' : 'http_status', status });
      const isAnswer = () => status >= 200 && status < 300;
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(controller) {
          if (call.timedOut) controller.abort(timedOutError());
          else call.cancel = (err) => controller.abort(err);
        },
        onResponseStart(controller, statusCode, headers) {
          if (statusCode < 200) return; // 1xx: informational, the answer follows
          status = statusCode;
          const declared = Number(headers['content-length'] ?? 0) || 0; // NaN (malformed): read and count instead
          if (isAnswer() && declared > maxResponseBytes) {
            // Stop reading; the connection is discarded.
            settle({ reason: 'response_too_large', status });
            controller.abort(new Error('webhook answer too large'));
          }
        },
        onResponseData(controller, chunk) {
          if (settled) return;
          size += chunk.length;
          if (!isAnswer()) {
            if (size > DISCARDED_BODY_LIMIT) {
              settle(refusal());
              controller.abort(new Error('webhook refusal body too large'));
            }
            return;
          }
          if (size > maxResponseBytes) {
            settle({ reason: 'response_too_large', status });
            controller.abort(new Error('webhook answer too large'));
            return;
          }
          chunks.push(chunk);
        },
        onResponseEnd() {
          if (settled) return;
          if (!isAnswer()) return settle(refusal());
          const answer = parseVerdictBody(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
          settle(
            answer === 'verified'
              ? { verified: true, status }
              : { reason: answer === 'denied' ? 'denied' : 'invalid_response', status },
          );
        },
        onResponseError(_controller, err) {
          if (settled) return;
          // A refusal is decided by its status; failing to drain its body does not change it.
          if (status >= 200 && !isAnswer()) return settle(refusal());
          settled = true;
          call.cancel = undefined;
          reject(err);
        },
      };
      pool.dispatch({ path: t.path, method: req.method, headers: req.headers, body: req.body }, handler);
    });
  }

  async function attempt(req: ReturnType<typeof buildRequest>, call: InFlight): Promise<Outcome> {
    // A GET URL carries this call's data, so only a POST webhook's URL is remembered.
    const t = req.isPost ? target(req.url) : parseTarget(req.url);
    const addresses = await resolveTarget(t, call);
    if (!Array.isArray(addresses)) return addresses;
    return exchange(poolFor(t.origin, addresses), t, req, call);
  }

  function toVerdict(webhook: SignableWebhook, outcome: Outcome, latencyMs: number, err?: unknown): WebhookVerdict {
    if ('verified' in outcome) return { verified: true, latencyMs, status: outcome.status };
    const verdict: WebhookVerdict = {
      verified: false,
      reason: outcome.reason,
      latencyMs,
      ...(outcome.status === undefined ? {} : { status: outcome.status }),
    };
    // The URL is not logged: its query string may hold the dApp's own credentials.
    const entry = { webhookId: webhook.id, ...verdict };
    if (outcome.reason === 'denied') logger.debug(entry, 'webhook denied sponsorship');
    else logger.warn(err === undefined ? entry : { ...entry, err }, 'webhook check failed');
    return verdict;
  }

  return {
    async call({ webhook, webhookData, operation }) {
      if (closed) throw new Error('webhook caller is closed');
      const started = performance.now();
      // Outside the try: Patron's own faults (secret, data) must surface as errors, not as a verdict.
      const req = buildRequest(webhook, webhookData, operation);
      const inFlight: InFlight = { timedOut: false, cancel: undefined };
      const timer = setTimeout(() => {
        inFlight.timedOut = true;
        inFlight.cancel?.(timedOutError());
      }, timeoutMs);
      let outcome: Outcome;
      let failure: unknown;
      try {
        outcome = await attempt(req, inFlight);
      } catch (err) {
        failure = err;
        outcome = { reason: inFlight.timedOut ? 'timeout' : classifyError(err) };
      } finally {
        clearTimeout(timer);
      }
      const latencyMs = Math.round((performance.now() - started) * 100) / 100;
      return toVerdict(webhook, outcome, latencyMs, failure);
    },
    async close() {
      closed = true;
      const all = [...pools.values()];
      pools.clear();
      await Promise.all(all.map((p) => p.close()));
    },
  };
}

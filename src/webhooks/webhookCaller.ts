import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type Dispatcher, Pool, request } from 'undici';
import type { SecretBox } from '../accounts/secretBox.js';
import type { WebhookRecord } from '../store/records.js';
import { newMessageId, signStandardWebhook } from './standardWebhooks.js';
import { parseVerdictBody, withGetData } from './webhookMessage.js';
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
   * secret, `webhookData` that is not JSON-serialisable, a closed caller); every fault of the receiver is a verdict.
   */
  call(args: { webhook: SignableWebhook; webhookData: Record<string, unknown> }): Promise<WebhookVerdict>;
  close(): Promise<void>;
}

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 2000;
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
export const WEBHOOK_USER_AGENT = 'Patron-Webhooks/1';
/** Bound on pooled origins; the least recently used pool is closed beyond it. */
const MAX_POOLS = 1024;
const MAX_CONNECTIONS_PER_ORIGIN = 64;

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

/** A `lookup` for net/tls.connect that answers with the addresses already checked: no second DNS query. */
function pinnedLookup(addresses: readonly string[]): LookupFunction {
  const entries = addresses.map((address) => ({ address, family: isIP(address) }));
  return (_hostname, options, callback) => {
    const first = entries[0];
    if (options.all === true) callback(null, entries);
    else if (first !== undefined) callback(null, first.address, first.family);
    else callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), '');
  };
}

/** Rejects with the signal's reason when it aborts first (a resolver need not support cancellation). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export function createWebhookCaller(options: WebhookCallerOptions): WebhookCaller {
  const timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const now = options.now ?? Date.now;
  const { logger, secretBox } = options;
  /** Keep-alive pools, one per origin and checked address set, in least-recently-used order. */
  const pools = new Map<string, Pool>();
  let closed = false;

  /**
   * The addresses to connect to (empty for an IP literal: nothing to resolve), or the failure. Every call
   * resolves through the injected resolver and, in production, refuses non-public answers with the same
   * `assertPublicHost` used at registration: DNS may have changed since (rebinding).
   */
  async function resolveTarget(url: URL, signal: AbortSignal): Promise<string[] | Outcome> {
    const resolved: string[] = [];
    let resolutionFailed = false;
    const capture: HostResolver = async (host) => {
      const addresses = await untilAborted(options.resolve(host), signal).catch((err: unknown) => {
        resolutionFailed = !signal.aborted;
        throw err;
      });
      if (addresses.length === 0) resolutionFailed = true;
      resolved.push(...addresses);
      return addresses;
    };
    const host = url.hostname.replace(/^\[|\]$/g, '');
    try {
      if (!options.allowPrivate) await assertPublicHost(url.hostname, capture);
      else if (isIP(host) === 0) await capture(host);
    } catch (err) {
      if (signal.aborted) throw err;
      return { reason: resolutionFailed ? 'connection_failed' : 'forbidden_address' };
    }
    return resolutionFailed ? { reason: 'connection_failed' } : resolved;
  }

  function poolFor(origin: string, addresses: readonly string[]): Pool {
    const key = `${origin} ${[...addresses].sort().join(',')}`;
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
   * Method, URL, body and Standard Webhooks headers. POST sends `{"data": webhookData}` and signs that body;
   * GET sends webhookData in the query (see withGetData) and signs the empty string as the body, as there is
   * none. So a GET signature authenticates the sender, id and time, not the query: prefer POST where that matters.
   */
  function buildRequest(webhook: SignableWebhook, webhookData: Record<string, unknown>) {
    const isPost = webhook.requestType === 'POST';
    const body = isPost ? JSON.stringify({ data: webhookData }) : '';
    const url = isPost ? webhook.url : withGetData(webhook.url, webhookData);
    const id = newMessageId();
    const timestamp = Math.floor(now() / 1000);
    const secret = secretBox.open(webhook.signingSecretCiphertext);
    const headers: Record<string, string> = {
      'user-agent': WEBHOOK_USER_AGENT,
      accept: 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signStandardWebhook({ secret, id, timestamp, body }),
      ...(isPost ? { 'content-type': 'application/json' } : {}),
    };
    return { url, method: webhook.requestType, headers, body: isPost ? body : null };
  }

  async function readOutcome(res: Dispatcher.ResponseData, signal: AbortSignal): Promise<Outcome> {
    const status = res.statusCode;
    if (status < 200 || status >= 300) {
      // Redirects are never followed: the target was not checked, and a 3xx is not an answer.
      await res.body.dump({ limit: 16 * 1024, signal }).catch(() => undefined);
      return { reason: status >= 300 && status < 400 ? 'redirect' : 'http_status', status };
    }
    const declared = Number(res.headers['content-length'] ?? 0) || 0; // NaN (malformed): read and count instead
    const chunks: Buffer[] = [];
    let size = 0;
    if (declared <= maxResponseBytes) {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > maxResponseBytes) break;
        chunks.push(chunk);
      }
    }
    if (declared > maxResponseBytes || size > maxResponseBytes) {
      // Stop reading; the connection is discarded. Destroying emits an abort error nobody else listens for.
      res.body.on('error', () => undefined).destroy();
      return { reason: 'response_too_large', status };
    }
    const answer = parseVerdictBody(Buffer.concat(chunks));
    if (answer === 'verified') return { verified: true, status };
    return { reason: answer === 'denied' ? 'denied' : 'invalid_response', status };
  }

  async function attempt(req: ReturnType<typeof buildRequest>, signal: AbortSignal): Promise<Outcome> {
    const url = new URL(req.url);
    const target = await resolveTarget(url, signal);
    if (!Array.isArray(target)) return target;
    const dispatcher = poolFor(url.origin, target);
    const res = await request(req.url, {
      dispatcher,
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal,
    });
    return readOutcome(res, signal);
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
    async call({ webhook, webhookData }) {
      if (closed) throw new Error('webhook caller is closed');
      const started = performance.now();
      // Outside the try: Patron's own faults (secret, data) must surface as errors, not as a verdict.
      const req = buildRequest(webhook, webhookData);
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new Error('webhook call timed out')), timeoutMs);
      let outcome: Outcome;
      let failure: unknown;
      try {
        outcome = await attempt(req, controller.signal);
      } catch (err) {
        failure = err;
        outcome = { reason: controller.signal.aborted ? 'timeout' : classifyError(err) };
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

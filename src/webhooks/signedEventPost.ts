import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import { pinnedLookup } from './pinnedLookup.js';
import { signStandardWebhook } from './standardWebhooks.js';
import { assertPublicHost, type HostResolver } from './webhookUrlPolicy.js';

/**
 * One signed JSON POST to a tenant's URL, for deliveries in the background (the dApps' lifecycle events): the
 * Standard Webhooks headers of the dApp webhooks (standardWebhooks.ts) with a `webhook-id` the caller fixes, so
 * every retry of one event carries the same id. Held to the tenant webhooks' rules, the same code: the SSRF rule
 * (assertPublicHost, checked again at every call against DNS rebinding, the connection pinned to the checked
 * addresses) and one time budget for DNS, connect, headers and body. Redirects are not followed (their target was
 * not checked). Any 2xx is a delivery; its body is read and dropped.
 */
export type SignedPostResult =
  | { readonly delivered: true; readonly status: number }
  | { readonly delivered: false; readonly error: string; readonly status?: number };

export interface SignedEventPoster {
  post(args: { url: string; secret: string; id: string; body: string }): Promise<SignedPostResult>;
}

export const EVENT_USER_AGENT = 'Patron-Events/1';

export function createSignedEventPoster(options: {
  readonly timeoutMs: number;
  /** Dev mode: loopback/private addresses may be called (PATRON_ALLOW_PRIVATE_WEBHOOKS). */
  readonly allowPrivate: boolean;
  readonly resolve: HostResolver;
  /** Clock for `webhook-timestamp` (milliseconds). */
  readonly now: () => number;
}): SignedEventPoster {
  /** The checked addresses to connect to (empty: an IP literal in dev mode, nothing to resolve), or the failure. */
  async function checkedAddresses(url: URL, deadline: AbortSignal): Promise<string[] | SignedPostResult> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (options.allowPrivate && isIP(host) !== 0) return [];
    const resolved: string[] = [];
    const capture: HostResolver = async (name) => {
      const addresses = await Promise.race([
        options.resolve(name),
        new Promise<never>((_, reject) => {
          deadline.addEventListener('abort', () => reject(new Error('timed out resolving the host')), { once: true });
        }),
      ]);
      resolved.push(...addresses);
      return addresses;
    };
    try {
      if (options.allowPrivate) await capture(host);
      else await assertPublicHost(url.hostname, capture);
    } catch (err) {
      return { delivered: false, error: err instanceof Error ? err.message : 'the host could not be checked' };
    }
    if (resolved.length === 0 && isIP(host) === 0) return { delivered: false, error: 'the host did not resolve' };
    return resolved;
  }

  return {
    async post({ url: raw, secret, id, body }) {
      const url = new URL(raw);
      const deadline = AbortSignal.timeout(options.timeoutMs);
      const addresses = await checkedAddresses(url, deadline);
      if (!Array.isArray(addresses)) return addresses;
      const timestamp = Math.floor(options.now() / 1000);
      const agent = new Agent({
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        connect: { timeout: options.timeoutMs, ...(addresses.length > 0 ? { lookup: pinnedLookup(addresses) } : {}) },
      });
      try {
        const res = await request(url, {
          method: 'POST',
          dispatcher: agent,
          signal: deadline,
          headers: {
            'user-agent': EVENT_USER_AGENT,
            'content-type': 'application/json',
            'webhook-id': id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signStandardWebhook({ secret, id, timestamp, body }),
          },
          body,
        });
        await res.body.dump({ limit: 16 * 1024 });
        if (res.statusCode >= 200 && res.statusCode < 300) return { delivered: true, status: res.statusCode };
        return { delivered: false, status: res.statusCode, error: `the endpoint answered HTTP ${res.statusCode}` };
      } catch (err) {
        if (deadline.aborted) return { delivered: false, error: `no answer within ${options.timeoutMs} ms` };
        const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
        return { delivered: false, error: `the connection failed${typeof code === 'string' ? ` (${code})` : ''}` };
      } finally {
        void agent.close();
      }
    },
  };
}

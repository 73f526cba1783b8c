import { isIP, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { assertPublicHost, type HostResolver } from '../webhooks/webhookUrlPolicy.js';
import type { JwksFetcher } from './jwksCache.js';

/** A JWKS is a few keys: a larger answer is not one (and is not read further). */
export const MAX_JWKS_BYTES = 64 * 1024;

/**
 * The production JWKS fetch, with the SSRF rules of every tenant URL (webhooks/webhookUrlPolicy.ts): the host
 * must resolve to public addresses only, checked at each fetch and the connection pinned to the addresses checked
 * (no second DNS answer, so no rebinding); https only, since the keys fetched decide who may spend the dApp's gas
 * budget; no redirects; one deadline; the body bounded. `allowPrivate` (dev mode, tests) lifts the address and
 * https rules, as PATRON_ALLOW_PRIVATE_WEBHOOKS does for webhooks.
 */
export function createGuardedJwksFetch(args: {
  resolve: HostResolver;
  allowPrivate: boolean;
  timeoutMs?: number;
}): JwksFetcher {
  const timeoutMs = args.timeoutMs ?? 2000;
  return async (raw) => {
    const url = new URL(raw);
    if (url.protocol !== 'https:' && !(args.allowPrivate && url.protocol === 'http:')) {
      throw new Error('a JWKS URL must be https');
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const addresses: string[] = [];
    const capture: HostResolver = async (h) => {
      const found = await args.resolve(h);
      addresses.push(...found);
      return found;
    };
    if (!args.allowPrivate) await assertPublicHost(url.hostname, capture);
    else if (isIP(host) === 0) await capture(host);
    const agent = new Agent({
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      connect: { timeout: timeoutMs, ...(addresses.length > 0 ? { lookup: pinnedLookup(addresses) } : {}) },
    });
    try {
      const res = await request(url, {
        method: 'GET',
        headers: { accept: 'application/json' },
        dispatcher: agent,
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new Error(`the JWKS URL answered HTTP ${res.statusCode}`);
      }
      let size = 0;
      const chunks: Buffer[] = [];
      for await (const chunk of res.body) {
        const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
        size += b.length;
        if (size > MAX_JWKS_BYTES) {
          res.body.destroy();
          throw new Error(`the JWKS is larger than ${MAX_JWKS_BYTES} bytes`);
        }
        chunks.push(b);
      }
      const doc: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      return doc;
    } finally {
      void agent.close();
    }
  };
}

/** A `lookup` for net/tls.connect that answers with the addresses already checked (as webhookCaller.ts's). */
function pinnedLookup(addresses: readonly string[]): LookupFunction {
  const entries = addresses.map((address) => ({ address, family: isIP(address) }));
  return (_hostname, options, callback) => {
    const first = entries[0];
    if (options.all === true) callback(null, entries);
    else if (first !== undefined) callback(null, first.address, first.family);
    else callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), '');
  };
}

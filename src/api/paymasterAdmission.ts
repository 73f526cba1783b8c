import type { FastifyReply, FastifyRequest } from 'fastify';
import { RateLimitedError } from '../errors/PatronError.js';
import type { RequestLimits } from '../rateLimit/requestLimits.js';
import { toRpcError } from '../rpc/rpcErrors.js';

/**
 * Counts one HTTP request on the paymaster URLs against its client IP's budget (`calls.perIp`), in the app's
 * onRequest hook: before the body is read or parsed and before the API key is looked up, so a preflight, an
 * unparsable or oversized body, an unknown key, a wrong chain id or junk under the prefix all spend it, and a
 * refused request costs no lookup, no parse and no store query (a blocked IP is refused from memory). The unit pays
 * for a lone call or a batch's first call (rpc/handleJsonRpc.ts asks for the others). Undefined when admitted;
 * otherwise the refusal, already sent.
 */
export async function admitPaymasterRequest(args: {
  readonly limits: RequestLimits;
  readonly req: FastifyRequest;
  readonly reply: FastifyReply;
}): Promise<FastifyReply | undefined> {
  const { req, reply } = args;
  try {
    await args.limits.paymasterCall(req.ip);
    return undefined;
  } catch (err) {
    if (!(err instanceof RateLimitedError)) throw err;
    reply.code(429).header('retry-after', String(err.retryAfterSeconds));
    // A preflight's refusal is bare: a browser fails a preflight that is not 2xx whatever it carries.
    if (req.method === 'OPTIONS') return reply.send();
    // The refusal depends on the IP only, not on the key or its dApp, so any origin may read it: a browser app
    // that cannot read its 429 (and Retry-After, which viem's retry waits for) sees a bare network error and
    // retries at once. Answering for the dApp's allowed origins only would take the key lookup refused here.
    const origin = req.headers.origin;
    if (origin !== undefined) {
      reply.headers({
        vary: 'Origin',
        'access-control-allow-origin': origin,
        'access-control-expose-headers': 'Retry-After',
      });
    }
    const { error } = toRpcError(err);
    req.log.debug({ req, res: reply }, 'paymaster request refused by its IP budget');
    return reply.header('content-type', 'application/json; charset=utf-8').send({ jsonrpc: '2.0', id: null, error });
  }
}

import type { CryptoBackend } from '../crypto/cryptoBackend.js';
import type { HostResolver } from '../webhooks/webhookUrlPolicy.js';
import { createGuardedJwksFetch } from './guardedJwksFetch.js';
import { createJwksCache } from './jwksCache.js';
import type { JtiReplayStore } from './replayStore.js';
import { createSponsorshipTokenGate, type SponsorshipTokenGate } from './sponsorshipTokenGate.js';
import { createSponsorshipTokenVerifier } from './sponsorshipTokenVerifier.js';

/**
 * The sponsorship path's token gate with its production parts: the SSRF-checked JWKS fetch (the webhook URL
 * policy's rules, `allowPrivate` as PATRON_ALLOW_PRIVATE_WEBHOOKS), the cached JWKS documents, the verifier on the
 * service's crypto back end, and the jti replay store (the SQL table in production).
 */
export function buildSponsorshipTokens(args: {
  replay: JtiReplayStore;
  crypto: CryptoBackend;
  resolve: HostResolver;
  allowPrivate: boolean;
  maxLifetimeSeconds: number;
}): SponsorshipTokenGate {
  const jwks = createJwksCache({
    fetchJwks: createGuardedJwksFetch({ resolve: args.resolve, allowPrivate: args.allowPrivate }),
  });
  const verifier = createSponsorshipTokenVerifier({
    jwks,
    replay: args.replay,
    crypto: args.crypto,
    maxLifetimeSeconds: args.maxLifetimeSeconds,
  });
  return createSponsorshipTokenGate({ verifier });
}

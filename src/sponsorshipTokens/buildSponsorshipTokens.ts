import type { Config } from '../config/config.js';
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
  config: Pick<Config, 'allowPrivateWebhookUrls' | 'sponsorshipTokenMaxLifetimeSeconds'>;
  /** The jti replay store: the SQL table's repository. */
  store: { readonly sponsorshipTokenUses: JtiReplayStore };
  crypto: CryptoBackend;
  resolve: HostResolver;
}): SponsorshipTokenGate {
  const { config } = args;
  const jwks = createJwksCache({
    fetchJwks: createGuardedJwksFetch({ resolve: args.resolve, allowPrivate: config.allowPrivateWebhookUrls }),
  });
  const verifier = createSponsorshipTokenVerifier({
    jwks,
    replay: args.store.sponsorshipTokenUses,
    crypto: args.crypto,
    maxLifetimeSeconds: config.sponsorshipTokenMaxLifetimeSeconds,
  });
  return createSponsorshipTokenGate({ verifier });
}

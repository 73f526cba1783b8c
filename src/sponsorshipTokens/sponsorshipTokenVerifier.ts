import type { Address } from 'viem';
import type { CryptoBackend } from '../crypto/cryptoBackend.js';
import type { RegisteredTokenKey } from '../dappSettings/registeredTokenKeys.js';
import type { JwksCache } from './jwksCache.js';
import type { JtiReplayStore } from './replayStore.js';
import { DEFAULT_CLOCK_SKEW_SECONDS, type TokenTimeRules, type TokenVerdict } from './sponsorshipClaims.js';
import { VOUCHER_PREFIX, verifyVoucher } from './sponsorshipVoucher.js';
import { refuse } from './tokenRefusal.js';
import { createKeyImporter } from './verifyJws.js';
import { verifyJwt } from './verifyJwt.js';

/** Longer than any sane JWT (an RS256 one with a few claims is ~600 characters): refused before any parsing. */
export const MAX_TOKEN_LENGTH = 8192;

export interface SponsorshipTokenVerifier {
  /** Checks a token without spending its jti (the stub and quote calls). */
  verify(args: VerifyArgs): Promise<TokenVerdict>;
  /** Checks it and spends its jti (the call that returns signed paymaster data): a second spend is `replayed`. */
  verifyAndSpend(args: VerifyArgs): Promise<TokenVerdict>;
}

export interface VerifyArgs {
  readonly token: string;
  readonly dappId: string;
  readonly chainId: number;
  readonly keys: readonly RegisteredTokenKey[];
}

export function createSponsorshipTokenVerifier(args: {
  jwks: JwksCache;
  replay: JtiReplayStore;
  /** The service's hashing and signing back end (native when it loads): the voucher's keccak and ecrecover. */
  crypto: CryptoBackend;
  maxLifetimeSeconds: number;
  clockSkewSeconds?: number;
  nowSeconds?: () => number;
}): SponsorshipTokenVerifier {
  const now = args.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  const rules = (): TokenTimeRules => ({
    nowSeconds: now(),
    maxLifetimeSeconds: args.maxLifetimeSeconds,
    clockSkewSeconds: args.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS,
  });

  const importKey = createKeyImporter();
  const verify = async (v: VerifyArgs): Promise<TokenVerdict> => {
    if (v.token.length === 0 || v.token.length > MAX_TOKEN_LENGTH) {
      return {
        ok: false,
        refusal: refuse('malformed', `the sponsorship token must be 1 to ${MAX_TOKEN_LENGTH} characters`),
      };
    }
    if (v.token.startsWith(VOUCHER_PREFIX)) {
      const signers = v.keys.flatMap((k) =>
        k.kind === 'address' ? [{ id: k.id, address: k.address as Address }] : [],
      );
      return verifyVoucher({
        token: v.token,
        dappId: v.dappId,
        chainId: v.chainId,
        signers,
        rules: rules(),
        crypto: args.crypto,
      });
    }
    return verifyJwt({ token: v.token, dappId: v.dappId, keys: v.keys, jwks: args.jwks, importKey, rules: rules() });
  };

  return {
    verify,
    async verifyAndSpend(v) {
      const verdict = await verify(v);
      if (!verdict.ok) return verdict;
      const { jti, exp } = verdict.claims;
      // Kept until exp plus the skew: until then the token would still verify.
      const expiresAt = exp + (args.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS);
      const spent = await args.replay.spend({ dappId: v.dappId, jti, expiresAt, nowSeconds: now() });
      if (!spent) {
        return { ok: false, refusal: refuse('replayed', `the sponsorship token's jti ${jti} was already used`) };
      }
      return verdict;
    },
  };
}

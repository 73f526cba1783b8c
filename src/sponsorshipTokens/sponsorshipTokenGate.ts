import { hash } from 'node:crypto';
import type { Address } from 'viem';
import type { DappTokenSettings } from '../dappSettings/sponsorshipTokenSettings.js';
import { DEFAULT_CLOCK_SKEW_SECONDS, type SponsorshipClaims } from './sponsorshipClaims.js';
import { type SponsorshipGrant, tokenRefused } from './sponsorshipGrant.js';
import type { SponsorshipTokenVerifier } from './sponsorshipTokenVerifier.js';
import { readCarriedToken } from './tokenCarriers.js';
import { refuse } from './tokenRefusal.js';

/** Where a paymaster call carries a token (each method says: rpc/rpcMethod.ts `sponsorshipToken`). */
export interface TokenCarrier {
  /** The ERC-7677 context's (or mode object's, or Pimlico context's) `sponsorshipToken`. */
  readonly contextToken: unknown;
  readonly webhookData: Readonly<Record<string, unknown>>;
  /** The op's sender, for the token's `sender` bound; undefined for a call without an op (pimlico_getTokenQuotes). */
  readonly sender: Address | undefined;
}

export interface SponsorshipTokenGate {
  /**
   * The call's token, verified (signature, audience, times, the `sender` bound) but not spent: undefined when it
   * carries none and the dApp does not require one. Throws SponsorshipTokenError (`token_required`, or the refusal).
   */
  admit(args: {
    readonly settings: DappTokenSettings;
    readonly dappId: string;
    readonly chainId: number;
    readonly authorization: string | undefined;
    readonly carrier: TokenCarrier;
  }): Promise<SponsorshipGrant | undefined>;
}

interface Verified {
  readonly dappId: string;
  readonly chainId: number;
  /** The settings object the token verified under: a new one (the owner changed keys) verifies again. */
  readonly settings: DappTokenSettings;
  readonly claims: SponsorshipClaims;
}

/** The cache's key for a token: its sha256 (one-shot `hash`, a few µs under createHash's object per call). */
const tokenCacheKey = (token: string): string => hash('sha256', token, 'base64');

/**
 * How long past its expiry (exp + the skew) a spent jti's row is kept before the sweep deletes it: instances' clocks
 * may differ, and one that runs behind still accepts the token a while after another's clock passed its end.
 */
export const JTI_SWEEP_MARGIN_SECONDS = 3600;

/**
 * Deletes the spent jtis no instance accepts again (deps.ts runs it in the background). A spent jti is refused while
 * its row lives, and a token is accepted until exp + skew by the clock of the instance that spends it: rows go
 * JTI_SWEEP_MARGIN_SECONDS after that, so an instance whose clock runs behind another's still finds the row.
 */
export function sweepSpentTokenIds(
  uses: { sweep(nowSeconds: number): Promise<number> },
  nowMs: number,
): Promise<number> {
  return uses.sweep(Math.floor(nowMs / 1000) - JTI_SWEEP_MARGIN_SECONDS);
}

/** Verified tokens kept: a stub → data pair (and a quote → sponsor pair) checks the signature once. */
export const VERIFIED_TOKEN_CACHE_ENTRIES = 10_000;

/**
 * The sponsorship path's token check (docs/guides/sponsorship-tokens.md). A verified token's claims are cached by
 * the sha256 of the token string until its `exp` (bounded, least recently used out), for the same dApp, chain and
 * settings object only; so the signature (~120 µs CPU for ES256) is checked once per token, and a token refused
 * once is checked again (nothing negative is cached). Only the signing step spends the jti, in both modes with the
 * op's reservation, in its transaction (`grant.use()`): after every refusal a request can meet (webhook, bounds,
 * simulation, caps), and only while the token is still valid, so a token admitted at its expiry edge and reserved
 * after it (a slow webhook) is refused as expired, never taken over from its own spent row (migration 0017).
 */
export function createSponsorshipTokenGate(args: {
  verifier: SponsorshipTokenVerifier;
  maxEntries?: number;
  clockSkewSeconds?: number;
  nowSeconds?: () => number;
}): SponsorshipTokenGate {
  const maxEntries = args.maxEntries ?? VERIFIED_TOKEN_CACHE_ENTRIES;
  const skew = args.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS;
  const now = args.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  const verified = new Map<string, Verified>();

  const grantOf = (claims: SponsorshipClaims, cacheKey: string): SponsorshipGrant => {
    const replayed = () =>
      tokenRefused(refuse('replayed', `the sponsorship token's jti ${claims.jti} was already used`));
    const use = () => {
      const nowSeconds = now();
      // Accepted until exp + skew, and its spent row lives that long (and a margin: JTI_SWEEP_MARGIN_SECONDS), so the
      // row can only be taken over by a spend that this check has already refused.
      if (nowSeconds > claims.exp + skew) {
        throw tokenRefused(
          refuse('expired', `the sponsorship token expired at ${claims.exp} while the request was checked`),
        );
      }
      // The signing step is spending it: at most one call ever gets past that, so its entry goes now rather than
      // when 10,000 newer ones pushed it out. A call a cap refused keeps the token usable and verifies it again.
      verified.delete(cacheKey);
      return { jti: claims.jti, expiresAt: claims.exp + skew, nowSeconds };
    };
    return { claims, use, replayed };
  };

  const claimsOf = async (a: Parameters<SponsorshipTokenGate['admit']>[0], token: string, key: string) => {
    const hit = verified.get(key);
    if (hit !== undefined) {
      verified.delete(key);
      const fresh = hit.claims.exp > now() - skew;
      if (fresh && hit.dappId === a.dappId && hit.chainId === a.chainId && hit.settings === a.settings) {
        verified.set(key, hit);
        return hit.claims;
      }
    }
    const verdict = await args.verifier.verify({ token, dappId: a.dappId, chainId: a.chainId, keys: a.settings.keys });
    if (!verdict.ok) throw tokenRefused(verdict.refusal);
    if (verified.size >= maxEntries) {
      const oldest = verified.keys().next();
      if (oldest.done !== true) verified.delete(oldest.value);
    }
    verified.set(key, { dappId: a.dappId, chainId: a.chainId, settings: a.settings, claims: verdict.claims });
    return verdict.claims;
  };

  return {
    async admit(a) {
      const carried = readCarriedToken({
        authorization: a.authorization,
        contextToken: a.carrier.contextToken,
        webhookData: a.carrier.webhookData,
      });
      if (carried.kind === 'refused') throw tokenRefused(carried.refusal);
      if (carried.kind === 'none') {
        if (!a.settings.required) return undefined;
        throw tokenRefused(
          refuse(
            'token_required',
            "this dApp sponsors only with a token from its backend: pass it as the context's sponsorshipToken, webhookData.sponsorshipToken or an Authorization: Bearer header",
          ),
        );
      }
      const cacheKey = tokenCacheKey(carried.token);
      const claims = await claimsOf(a, carried.token, cacheKey);
      const sender = a.carrier.sender;
      if (claims.sender !== undefined && sender !== undefined && claims.sender.toLowerCase() !== sender.toLowerCase()) {
        throw tokenRefused(
          refuse('sender_mismatch', `the sponsorship token is bound to sender ${claims.sender}, not ${sender}`),
        );
      }
      return grantOf(claims, cacheKey);
    },
  };
}

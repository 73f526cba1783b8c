import { pemToJwk } from '../crypto/pemPublicKey.js';
import {
  algorithmOfJwk,
  JWT_ALGORITHMS,
  type JwtAlgorithm,
  type PublicJwk,
  type RegisteredTokenKey,
} from '../dappSettings/registeredTokenKeys.js';
import type { JwksCache } from './jwksCache.js';
import { checkTokenTimes, type TokenTimeRules, type TokenVerdict } from './sponsorshipClaims.js';
import { firstIssue, jwtClaimsSchema, readCommonJwtClaims } from './tokenClaimsSchema.js';
import { refuse } from './tokenRefusal.js';
import { type CompactJws, decodeCompactJws, type KeyImporter, verifyJwsSignature } from './verifyJws.js';

/** A registered key as a JWK, with where it came from. */
interface CandidateKey {
  readonly jwk: PublicJwk;
  readonly keyId: string;
}

const isAllowedAlgorithm = (alg: unknown): alg is JwtAlgorithm =>
  typeof alg === 'string' && (JWT_ALGORITHMS as readonly string[]).includes(alg);

/**
 * A key is tried only for its own algorithm (its kty/crv, and its `alg` when the JWK names one) and, when both
 * name one, its own `kid`. The header's `jwk`, `jku`, `x5u` and `x5c` are never read: only registered keys verify.
 */
function matches(key: CandidateKey, alg: JwtAlgorithm, kid: string | undefined): boolean {
  if (algorithmOfJwk(key.jwk) !== alg) return false;
  if (key.jwk.alg !== undefined && key.jwk.alg !== alg) return false;
  return kid === undefined || key.jwk.kid === undefined || key.jwk.kid === kid;
}

async function pastedKeys(keys: readonly RegisteredTokenKey[]): Promise<CandidateKey[]> {
  const out: CandidateKey[] = [];
  for (const k of keys) {
    if (k.kind === 'jwk') out.push({ jwk: k.jwk, keyId: k.jwk.kid ?? k.id });
    // A PEM that does not parse as its algorithm's key verifies nothing (the admin API refuses it at registration).
    if (k.kind === 'pem') {
      const jwk = await pemToJwk({ pem: k.pem, alg: k.alg }).catch(() => undefined);
      if (jwk !== undefined) out.push({ jwk, keyId: k.id });
    }
  }
  return out;
}

async function urlKeys(args: { urls: readonly string[]; jwks: JwksCache; refresh: boolean }): Promise<CandidateKey[]> {
  const out: CandidateKey[] = [];
  for (const url of args.urls) {
    if (args.refresh) await args.jwks.refresh(url);
    for (const jwk of await args.jwks.keys(url)) out.push({ jwk, keyId: jwk.kid ?? url });
  }
  return out;
}

/** Verifies a compact JWS against the dApp's keys: signature first, then the claims. */
export async function verifyJwt(args: {
  token: string;
  dappId: string;
  keys: readonly RegisteredTokenKey[];
  jwks: JwksCache;
  importKey: KeyImporter;
  rules: TokenTimeRules;
}): Promise<TokenVerdict> {
  const jws = decodeCompactJws(args.token);
  if (jws === undefined) {
    return { ok: false, refusal: refuse('malformed', 'the sponsorship token is neither a JWT nor an eip712. voucher') };
  }
  const alg = jws.header.alg;
  if (!isAllowedAlgorithm(alg)) {
    const message = `the sponsorship token's alg ${String(alg)} is not accepted: sign with ES256, EdDSA or RS256`;
    return { ok: false, refusal: refuse('algorithm_not_allowed', message) };
  }
  // RFC 7515 §4.1.11: a `crit` extension the verifier does not implement must be refused; Patron implements none.
  if (jws.header.crit !== undefined) {
    return { ok: false, refusal: refuse('malformed', "the sponsorship token's header must not have crit") };
  }
  const kid = typeof jws.header.kid === 'string' ? jws.header.kid : undefined;
  const urls = args.keys.flatMap((k) => (k.kind === 'jwksUrl' ? [k.url] : []));
  let candidates: CandidateKey[];
  try {
    candidates = [...(await pastedKeys(args.keys)), ...(await urlKeys({ urls, jwks: args.jwks, refresh: false }))];
    // An unknown kid may be a key the dApp just rotated in: its JWKS is fetched again, at most once an interval.
    if (!candidates.some((c) => matches(c, alg, kid)) && kid !== undefined && urls.length > 0) {
      candidates = [...(await pastedKeys(args.keys)), ...(await urlKeys({ urls, jwks: args.jwks, refresh: true }))];
    }
  } catch {
    const message = "the dApp's JWKS URL could not be fetched; retry later";
    return { ok: false, refusal: refuse('keys_unavailable', message) };
  }
  const usable = candidates.filter((c) => matches(c, alg, kid));
  if (usable.length === 0) {
    const message = `no key registered for this dApp verifies ${alg}${kid === undefined ? '' : ` with kid ${kid}`}`;
    return { ok: false, refusal: refuse('unknown_key', message) };
  }
  const verified = usable.find((candidate) => verifiesWith({ jws, alg, candidate, importKey: args.importKey }));
  if (verified === undefined) {
    return { ok: false, refusal: refuse('bad_signature', "the sponsorship token's signature does not verify") };
  }
  return checkPayload({ payload: jws.payload, dappId: args.dappId, rules: args.rules, keyId: verified.keyId });
}

function verifiesWith(args: { jws: CompactJws; alg: JwtAlgorithm; candidate: CandidateKey; importKey: KeyImporter }) {
  try {
    return verifyJwsSignature({ jws: args.jws, alg: args.alg, key: args.importKey(args.candidate.jwk) });
  } catch {
    return false; // a key node:crypto cannot import verifies nothing
  }
}

const audiences = (aud: unknown): unknown[] | undefined =>
  typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : undefined;

function checkPayload(args: { payload: unknown; dappId: string; rules: TokenTimeRules; keyId: string }): TokenVerdict {
  const { payload, dappId } = args;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    return { ok: false, refusal: refuse('malformed', "the sponsorship token's payload must be a JSON object") };
  }
  const aud = audiences((payload as Record<string, unknown>).aud);
  if (aud === undefined) {
    return {
      ok: false,
      refusal: refuse('missing_claim', `the sponsorship token must have aud: this dApp's id (${dappId})`),
    };
  }
  if (!aud.includes(dappId)) {
    const message = `the sponsorship token's aud must be this dApp's id (${dappId})`;
    return { ok: false, refusal: refuse('wrong_audience', message) };
  }
  let c = readCommonJwtClaims(payload as Record<string, unknown>);
  if (c === undefined) {
    const parsed = jwtClaimsSchema.safeParse(payload);
    if (!parsed.success) {
      return { ok: false, refusal: refuse('missing_claim', `the sponsorship token's ${firstIssue(parsed.error)}`) };
    }
    c = parsed.data;
  }
  const timeRefusal = checkTokenTimes({ exp: c.exp, nbf: c.nbf, iat: c.iat, rules: args.rules });
  if (timeRefusal !== undefined) return { ok: false, refusal: timeRefusal };
  return {
    ok: true,
    claims: {
      format: 'jwt',
      sub: c.sub,
      aud: dappId,
      exp: c.exp,
      jti: c.jti,
      sender: c.sender,
      addr: c.addr,
      maxCostWei: c.maxCostWei,
      contracts: c.contracts,
      keyId: args.keyId,
    },
  };
}

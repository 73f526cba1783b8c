import {
  decodeProtectedHeader,
  errors,
  exportJWK,
  importJWK,
  importSPKI,
  type JWK,
  type JWTPayload,
  jwtVerify,
} from 'jose';
import type { JwksCache } from './jwksCache.js';
import {
  algorithmOfJwk,
  JWT_ALGORITHMS,
  type JwtAlgorithm,
  type PublicJwk,
  type RegisteredTokenKey,
} from './registeredKeys.js';
import { checkTokenTimes, type TokenTimeRules, type TokenVerdict } from './sponsorshipClaims.js';
import { firstIssue, jwtClaimsSchema } from './tokenClaimsSchema.js';
import { refuse } from './tokenRefusal.js';

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

/** A PEM (SPKI) public key as a JWK of its algorithm, without a kid: a pasted PEM has none, so it matches any. */
export async function pemToJwk(args: { pem: string; alg: JwtAlgorithm }): Promise<PublicJwk> {
  const key = await importSPKI(args.pem, args.alg, { extractable: true });
  const jwk = await exportJWK(key);
  return { ...jwk, kty: jwk.kty ?? '', alg: args.alg };
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

/**
 * Imported keys, by their JWK text and algorithm: importing costs more than verifying. Bounded; when full it starts
 * over (an entry is cheap to recompute).
 */
export type KeyImporter = (jwk: PublicJwk, alg: JwtAlgorithm) => ReturnType<typeof importJWK>;

export function createKeyImporter(maxKeys = 1000): KeyImporter {
  const imported = new Map<string, ReturnType<typeof importJWK>>();
  return (jwk, alg) => {
    const text = JSON.stringify(jwk);
    const cacheKey = `${alg} ${text}`;
    const hit = imported.get(cacheKey);
    if (hit !== undefined) return hit;
    if (imported.size >= maxKeys) imported.clear();
    const plain: JWK = JSON.parse(text);
    const key = importJWK(plain, alg);
    key.catch(() => imported.delete(cacheKey));
    imported.set(cacheKey, key);
    return key;
  };
}

/** jose's claim failures (checked after the signature) as our refusals. */
function claimRefusal(err: unknown, dappId: string): TokenVerdict | undefined {
  if (err instanceof errors.JWTExpired)
    return { ok: false, refusal: refuse('expired', 'the sponsorship token has expired') };
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') {
      const message = `the sponsorship token's aud must be this dApp's id (${dappId})`;
      return { ok: false, refusal: refuse('wrong_audience', message) };
    }
    if (err.claim === 'nbf' || err.claim === 'iat') {
      return { ok: false, refusal: refuse('not_yet_valid', `the sponsorship token's ${err.claim} is in the future`) };
    }
    return { ok: false, refusal: refuse('missing_claim', `the sponsorship token's ${err.claim} claim: ${err.reason}`) };
  }
  return undefined;
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
  const { token, dappId, rules } = args;
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    if (token.split('.').length !== 3) throw new Error('not a compact JWS');
    header = decodeProtectedHeader(token);
  } catch {
    return { ok: false, refusal: refuse('malformed', 'the sponsorship token is neither a JWT nor an eip712. voucher') };
  }
  const alg = header.alg;
  if (!isAllowedAlgorithm(alg)) {
    const message = `the sponsorship token's alg ${String(alg)} is not accepted: sign with ES256, EdDSA or RS256`;
    return { ok: false, refusal: refuse('algorithm_not_allowed', message) };
  }
  const kid = typeof header.kid === 'string' ? header.kid : undefined;
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
  for (const candidate of usable) {
    let payload: JWTPayload;
    try {
      const key = await args.importKey(candidate.jwk, alg);
      ({ payload } = await jwtVerify(token, key, {
        algorithms: [alg],
        audience: dappId,
        currentDate: new Date(rules.nowSeconds * 1000),
        clockTolerance: rules.clockSkewSeconds,
        requiredClaims: ['sub', 'exp', 'jti', 'aud'],
      }));
    } catch (err) {
      const refusal = claimRefusal(err, dappId);
      if (refusal !== undefined) return refusal;
      continue; // this key did not verify it: try the next one
    }
    return checkPayload({ payload, dappId, rules, keyId: candidate.keyId });
  }
  return { ok: false, refusal: refuse('bad_signature', "the sponsorship token's signature does not verify") };
}

function checkPayload(args: {
  payload: JWTPayload;
  dappId: string;
  rules: TokenTimeRules;
  keyId: string;
}): TokenVerdict {
  const parsed = jwtClaimsSchema.safeParse(args.payload);
  if (!parsed.success) {
    return { ok: false, refusal: refuse('missing_claim', `the sponsorship token's ${firstIssue(parsed.error)}`) };
  }
  const c = parsed.data;
  const timeRefusal = checkTokenTimes({ exp: c.exp, nbf: c.nbf, iat: c.iat, rules: args.rules });
  if (timeRefusal !== undefined) return { ok: false, refusal: timeRefusal };
  return {
    ok: true,
    claims: {
      format: 'jwt',
      sub: c.sub,
      aud: args.dappId,
      exp: c.exp,
      jti: c.jti,
      sender: c.sender,
      maxCostWei: c.maxCostWei,
      contracts: c.contracts,
      keyId: args.keyId,
    },
  };
}

import { type Address, getAddress, type Hex, hexToBytes, isAddressEqual, zeroAddress } from 'viem';
import { z } from 'zod';
import type { CryptoBackend } from '../crypto/cryptoBackend.js';
import { checkTokenTimes, type TokenTimeRules, type TokenVerdict } from './sponsorshipClaims.js';
import { firstIssue, MAX_TOKEN_CONTRACTS } from './tokenClaimsSchema.js';
import { refuse } from './tokenRefusal.js';
import { recoverSigner, type SponsorshipVoucher, voucherDigest } from './voucherDigest.js';

/** A voucher token is this prefix and the base64url of `{ voucher, signature }` (docs/guides/sponsorship-tokens.md). */
export const VOUCHER_PREFIX = 'eip712.';

/**
 * The EIP-712 domain: Patron's name and version and the chain sponsored. The dApp is in the message (`dapp`), so a
 * voucher for one dApp or chain verifies for no other. No verifyingContract: a dApp's backend need not know which
 * paymaster contract serves each chain, and Patron's name already keeps these signatures apart from any contract's.
 */
export const voucherDomain = (chainId: number) => ({ name: 'Patron Sponsorship', version: '1', chainId }) as const;

export const voucherTypes = {
  SponsorshipVoucher: [
    { name: 'dapp', type: 'string' },
    { name: 'sub', type: 'string' },
    { name: 'nbf', type: 'uint64' },
    { name: 'exp', type: 'uint64' },
    { name: 'jti', type: 'bytes32' },
    { name: 'sender', type: 'address' },
    { name: 'addr', type: 'address' },
    { name: 'maxCostWei', type: 'uint256' },
    { name: 'contracts', type: 'address[]' },
  ],
} as const;

const decimal = z
  .string()
  .regex(/^\d{1,78}$/, { error: 'must be a decimal string' })
  .transform(BigInt);
const addr = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, { error: 'must be an address' })
  .transform((v) => v as Address);

const voucherTokenSchema = z.object({
  voucher: z.object({
    dapp: z.string().min(1).max(200),
    sub: z.string().min(1).max(256),
    nbf: decimal,
    exp: decimal,
    jti: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, { error: 'must be 32 bytes of hex' })
      .transform((v) => v as Hex),
    sender: addr,
    addr,
    maxCostWei: decimal,
    contracts: z.array(addr).max(MAX_TOKEN_CONTRACTS),
  }),
  signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/, { error: 'must be a 65-byte signature' }),
});

/** The token string for a signed voucher (what the dApp's backend hands its front end). */
export function encodeVoucherToken(args: { voucher: SponsorshipVoucher; signature: Hex }): string {
  const { voucher: v } = args;
  const json = JSON.stringify({
    voucher: { ...v, nbf: v.nbf.toString(), exp: v.exp.toString(), maxCostWei: v.maxCostWei.toString() },
    signature: args.signature,
  });
  return `${VOUCHER_PREFIX}${Buffer.from(json).toString('base64url')}`;
}

const MAX_UINT64 = 2n ** 64n - 1n;

/** Verifies a voucher: signed by one of the dApp's registered addresses for this chain, then its claims. */
export async function verifyVoucher(args: {
  token: string;
  dappId: string;
  chainId: number;
  signers: readonly { id: string; address: Address }[];
  rules: TokenTimeRules;
  crypto: CryptoBackend;
}): Promise<TokenVerdict> {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(args.token.slice(VOUCHER_PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    return { ok: false, refusal: refuse('malformed', 'the eip712. voucher is not base64url JSON') };
  }
  const parsed = voucherTokenSchema.safeParse(raw);
  if (!parsed.success) {
    return { ok: false, refusal: refuse('malformed', `the eip712. voucher's ${firstIssue(parsed.error)}`) };
  }
  const { voucher: v, signature } = parsed.data;
  if (v.nbf > MAX_UINT64 || v.exp > MAX_UINT64) {
    return { ok: false, refusal: refuse('malformed', "the eip712. voucher's nbf and exp must fit uint64") };
  }
  const digest = voucherDigest({ voucher: v, chainId: args.chainId, crypto: args.crypto });
  const signer = recoverSigner({ digest, signature: hexToBytes(signature as Hex), crypto: args.crypto });
  if (signer === undefined) {
    return { ok: false, refusal: refuse('bad_signature', "the eip712. voucher's signature does not recover") };
  }
  // A voucher signed for another chain recovers some other address: it is refused here, as any unknown signer.
  const key = args.signers.find((s) => isAddressEqual(s.address, signer));
  if (key === undefined) {
    const message = `the eip712. voucher for chain ${args.chainId} is not signed by an address this dApp registered`;
    return { ok: false, refusal: refuse('unknown_key', message) };
  }
  if (v.dapp !== args.dappId) {
    return { ok: false, refusal: refuse('wrong_audience', `the eip712. voucher's dapp must be ${args.dappId}`) };
  }
  const exp = Number(v.exp);
  const timeRefusal = checkTokenTimes({ exp, nbf: v.nbf === 0n ? undefined : Number(v.nbf), rules: args.rules });
  if (timeRefusal !== undefined) return { ok: false, refusal: timeRefusal };
  return {
    ok: true,
    claims: {
      format: 'eip712',
      sub: v.sub,
      aud: args.dappId,
      exp,
      jti: v.jti.toLowerCase(),
      sender: isAddressEqual(v.sender, zeroAddress) ? undefined : v.sender,
      addr: isAddressEqual(v.addr, zeroAddress) ? undefined : getAddress(v.addr),
      maxCostWei: v.maxCostWei === 0n ? undefined : v.maxCostWei,
      contracts: v.contracts.length === 0 ? undefined : v.contracts,
      keyId: key.id,
    },
  };
}

import type { Address, Hex } from 'viem';
import type { PolicyDecision } from '../policies/policyGate.js';

/**
 * What the domain tells about one paymaster request as it goes, for whoever observes calls (the request log,
 * the metrics): reported through one callback the transport passes in, never written into a shared object.
 * A request that fails half-way has reported what it got to.
 */
export type RequestFact =
  | { readonly kind: 'op'; readonly mode: 'SPONSORED' | 'ERC20'; readonly sender: Address }
  /** The webhook check: allowed or not, the failure reason, its wall-clock time and how many were called. */
  | {
      readonly kind: 'webhook';
      readonly allowed: boolean;
      readonly reason?: string;
      readonly latencyMs: number;
      readonly calls: number;
    }
  /** The policies passed and the caps were reserved (or none applied). */
  | { readonly kind: 'policy'; readonly decision: PolicyDecision }
  /** A signature was issued (see IssuedSignature). */
  | ({
      readonly kind: 'signed';
      readonly mode: 'SPONSORED' | 'ERC20';
      readonly paymasterAndData: Hex;
    } & IssuedSignature);

export type ReportFact = (fact: RequestFact) => void;

/**
 * A signature as it is issued: by which paymaster, what the EntryPoint may charge it for the op (`worstCaseWei`)
 * and until when. `userOpHash` is computed once, with the native keccak, on its first call, by whoever needs it
 * first (the ledger's reservation, the request log's flush); the solvency guard keys by sender and nonce instead.
 */
export interface IssuedSignature {
  readonly chainId: number;
  readonly paymaster: Address;
  readonly entryPoint: Address;
  readonly worstCaseWei: bigint;
  /** Unix seconds by which the window has surely closed (the request log's expiry; a block window's estimate). */
  readonly validUntil: number;
  /** The signed window as the chain checks it (validityWindows.ts, chainWindowOf): when the liability ends. */
  readonly window: { readonly unit: 'seconds' | 'blocks'; readonly until: number };
  /** The op's sender and nonce: an EntryPoint includes one op per pair, and its UserOperationEvent carries both. */
  readonly sender: Address;
  readonly nonce: bigint;
  /** chain/opKey.ts of (chain, EntryPoint, sender, nonce), lower-case, computed once on first use (native keccak). */
  readonly opKey: () => Hex;
  /**
   * The paymaster signature's fingerprint: the first 16 bytes of its r, hex. Settlement matches the signature an
   * included op carries against it when two dApps signed one op key (store/ledger/reservationMerge.ts).
   */
  readonly signature: string;
  /**
   * The EntryPoint's userOpHash, computed once on first use. On the serving loop: the signature's hasher remembers
   * the keccaks of the op's bytes (memoKeccak), so this costs the hash's last words, where the same hash made on the
   * request log's thread from a copy of the op cost ~40 µs more CPU per request.
   */
  readonly userOpHash: () => Hex;
}

export function issuedSignature(args: {
  readonly chain: { readonly chainId: number; readonly paymaster: Address; readonly entryPoint: Address };
  readonly worstCaseWei: bigint;
  readonly validUntil: number;
  readonly window: IssuedSignature['window'];
  readonly sender: Address;
  readonly nonce: bigint;
  /** The EntryPoint's userOpHash of the signed op (the version's module computes it). */
  readonly hash: () => Hex;
  /** The op key of (chain, EntryPoint, sender, nonce). */
  readonly opKey: () => Hex;
  readonly signature: string;
}): IssuedSignature {
  let hash: Hex | undefined;
  const userOpHash = () => {
    hash ??= args.hash().toLowerCase() as Hex;
    return hash;
  };
  let key: Hex | undefined;
  const opKey = () => {
    key ??= args.opKey().toLowerCase() as Hex;
    return key;
  };
  return {
    chainId: args.chain.chainId,
    paymaster: args.chain.paymaster,
    entryPoint: args.chain.entryPoint,
    worstCaseWei: args.worstCaseWei,
    validUntil: args.validUntil,
    window: args.window,
    sender: args.sender,
    nonce: args.nonce,
    opKey,
    signature: args.signature,
    userOpHash,
  };
}

/** A signature's fingerprint (IssuedSignature.signature): r's first 16 bytes, hex, of r ‖ s ‖ v. */
export const signatureFingerprint = (signature: Uint8Array): string =>
  Buffer.from(signature.buffer, signature.byteOffset, 16).toString('hex');

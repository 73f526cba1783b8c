import { type Address, type Hex, parseAbi } from 'viem';
import { createTtlCache } from '../cache/ttlCache.js';
import type { ChainRuntime } from './chainRegistry.js';

/**
 * The chain reads of the policies' gating rules (docs/guides/policies.md, "Gating rules"): token balances, NFT
 * counts and EAS attestations, through one bounded LRU (cache/ttlCache.ts) keyed by chain, contract, call and
 * subject, so a key never answers for another chain. Concurrent misses for one key share one eth_call. A read that
 * fails (RPC down, a revert, an address without code) rejects with GatingReadError and is not cached: the rule
 * denies (fail closed) and the next request reads again.
 *
 * The trade-off of the TTL (`PATRON_GATING_CACHE_SECONDS`, default 30): a cached "holds" answer may be that many
 * seconds stale, so an NFT or a balance moved to a second wallet right after a request still passes for the first
 * wallet until its entry expires, and a revoked attestation still passes as long. A dApp farmed that way lowers the
 * TTL (0 reads every time) or adds a `user` cap, which no second wallet escapes.
 */
export interface EasAttestation {
  readonly uid: Hex;
  readonly schema: Hex;
  /** Unix seconds. */
  readonly time: bigint;
  /** Unix seconds; 0: never expires. */
  readonly expirationTime: bigint;
  /** Unix seconds; 0: not revoked. */
  readonly revocationTime: bigint;
  readonly recipient: Address;
  readonly attester: Address;
}

/** One balance a gating rule reads. */
export type BalanceCall =
  | { readonly kind: 'erc20'; readonly contract: Address; readonly owner: Address }
  | { readonly kind: 'native'; readonly owner: Address }
  | { readonly kind: 'erc721'; readonly contract: Address; readonly owner: Address }
  | { readonly kind: 'erc1155'; readonly contract: Address; readonly owner: Address; readonly tokenId: bigint };

export interface GatingReads {
  balance(chain: Pick<ChainRuntime, 'chainId' | 'client'>, call: BalanceCall): Promise<bigint>;
  /** EAS `getAttestation(uid)`: an unknown uid answers an empty attestation (uid 0), as EAS does. */
  attestation(
    chain: Pick<ChainRuntime, 'chainId' | 'client'>,
    args: { readonly eas: Address; readonly uid: Hex },
  ): Promise<EasAttestation>;
}

/** The chain could not answer a gating read; the rule denies with reason `readFailed`. */
export class GatingReadError extends Error {
  override name = 'GatingReadError' as const;
}

const ERC20_OR_721 = parseAbi(['function balanceOf(address owner) view returns (uint256)']);
const ERC1155 = parseAbi(['function balanceOf(address owner, uint256 id) view returns (uint256)']);
const EAS = parseAbi([
  'struct Attestation { bytes32 uid; bytes32 schema; uint64 time; uint64 expirationTime; uint64 revocationTime; bytes32 refUID; address recipient; address attester; bool revocable; bytes data; }',
  'function getAttestation(bytes32 uid) view returns (Attestation)',
]);

/** At most this many answers are kept (LRU beyond). */
export const GATING_CACHE_MAX_ENTRIES = 10_000;

type Value = bigint | EasAttestation;

export function createGatingReads(args: {
  /** How long an answer is reused; 0: every request reads. */
  readonly ttlMs: number;
  readonly maxEntries?: number;
  readonly now?: () => number;
}): GatingReads {
  const cache = createTtlCache<Value>({
    ttlMs: args.ttlMs,
    maxEntries: args.maxEntries ?? GATING_CACHE_MAX_ENTRIES,
    ...(args.now === undefined ? {} : { now: args.now }),
  });
  const read = async <T extends Value>(key: string, what: string, load: () => Promise<T>): Promise<T> =>
    (await cache.get(key, async () => {
      try {
        return await load();
      } catch (err) {
        throw new GatingReadError(`the chain could not be read for ${what}`, { cause: err });
      }
    })) as T;

  return {
    balance(chain, call) {
      const owner = call.owner.toLowerCase();
      if (call.kind === 'native') {
        return read(`${chain.chainId}|native|${owner}`, 'a native balance', () =>
          chain.client.getBalance({ address: call.owner }),
        );
      }
      const contract = call.contract.toLowerCase();
      if (call.kind === 'erc1155') {
        return read(`${chain.chainId}|${contract}|erc1155|${owner}|${call.tokenId}`, 'an ERC-1155 balance', () =>
          chain.client.readContract({
            address: call.contract,
            abi: ERC1155,
            functionName: 'balanceOf',
            args: [call.owner, call.tokenId],
          }),
        );
      }
      // ERC-20 and ERC-721 share the selector and the answer; the key keeps the kind anyway.
      return read(`${chain.chainId}|${contract}|${call.kind}|${owner}`, `an ${call.kind} balance`, () =>
        chain.client.readContract({
          address: call.contract,
          abi: ERC20_OR_721,
          functionName: 'balanceOf',
          args: [call.owner],
        }),
      );
    },

    attestation(chain, { eas, uid }) {
      const key = `${chain.chainId}|${eas.toLowerCase()}|attestation|${uid.toLowerCase()}`;
      return read(key, 'an attestation', async (): Promise<EasAttestation> => {
        const a = await chain.client.readContract({
          address: eas,
          abi: EAS,
          functionName: 'getAttestation',
          args: [uid],
        });
        return {
          uid: a.uid,
          schema: a.schema,
          time: a.time,
          expirationTime: a.expirationTime,
          revocationTime: a.revocationTime,
          recipient: a.recipient,
          attester: a.attester,
        };
      });
    },
  };
}

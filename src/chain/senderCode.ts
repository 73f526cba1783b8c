import { type Address, decodeErrorResult, encodeFunctionData, getAddress, type Hex, keccak256, parseAbi } from 'viem';
import { createTtlCache } from '../cache/ttlCache.js';
import { UnavailableError } from '../errors/PatronError.js';
import type { ChainRuntime } from './chainRegistry.js';
import { findRevertData } from './revertData.js';

/**
 * What Patron reads of an op's sender from the chain, cached in one bounded LRU (cache/ttlCache.ts) whose entries
 * live as long as what they describe can be trusted not to change:
 * - a contract's code: CODE_TTL_MS. Code never changes after deployment (EIP-6780: SELFDESTRUCT removes code only
 *   in the transaction that created it), so its kind can be kept long; the hour only bounds a chain that predates
 *   Cancun, where a self-destructed CREATE2 address could be redeployed with other code;
 * - an EIP-7702 delegation (code 0xef0100 ‖ delegate) and a proxy's implementation slot: SHORT_TTL_MS. The EOA
 *   re-delegates, and the proxy's owner upgrades, whenever it likes; a few seconds is how stale a signature-time
 *   check may be (the v0.7+ paymaster binds the sender's code hash on chain, so a stale delegation only makes
 *   Patron sign what fails as AA34);
 * - an address without code: never cached, since it may be deployed by the next block;
 * - the sender an initCode deploys (EntryPoint `getSenderAddress`): CODE_TTL_MS, only for a factory Patron knows,
 *   whose answer is a CREATE2 address and cannot change.
 * Concurrent misses for one key share one read. A failed read is UnavailableError (HTTP 503; clients retry).
 */
export const CODE_TTL_MS = 60 * 60_000;
export const SHORT_TTL_MS = 5_000;

/** EIP-7702's delegation designator: an EOA's code is 0xef0100 ‖ delegate (23 bytes). */
const DESIGNATOR = '0xef0100';

export interface SenderCode {
  /** keccak256 of the code: what EXTCODEHASH returns, and what PatronPaymasterV07 binds for an empty initCode. */
  readonly codeHash: Hex;
  /** The EIP-7702 delegate, when the code is a delegation designator. */
  readonly delegate: Address | undefined;
}

export interface ChainReads {
  /** The address's code as Patron uses it, or undefined when it has none. */
  code(chain: ChainRuntime, address: Address): Promise<SenderCode | undefined>;
  /** One storage word of a contract (a proxy's implementation slot), as 32 bytes of hex. */
  storage(chain: ChainRuntime, address: Address, slot: Hex): Promise<Hex>;
  /**
   * The sender the chain's EntryPoint says `initCode` deploys (getSenderAddress runs the factory in an eth_call),
   * or undefined when the factory does not answer with one. Call it for a factory Patron knows only: the answer is
   * cached as a fact.
   */
  senderOfInitCode(chain: ChainRuntime, initCode: Hex): Promise<Address | undefined>;
}

type Entry =
  | { readonly kind: 'code'; readonly value: SenderCode | undefined }
  | { readonly kind: 'word'; readonly value: Hex }
  | { readonly kind: 'sender'; readonly value: Address | undefined };

/** The code's designator test, by length and prefix (the EIP fixes both). */
export function delegateOfCode(code: Hex): Address | undefined {
  if (code.length !== 2 + 23 * 2 || !code.toLowerCase().startsWith(DESIGNATOR)) return undefined;
  return getAddress(`0x${code.slice(8)}`);
}

/** keccak256(0xef0100 ‖ delegate): the code hash of an EOA delegated to `delegate`. */
export function delegationCodeHash(delegate: Address): Hex {
  return keccak256(`${DESIGNATOR}${delegate.slice(2).toLowerCase()}`);
}

const GET_SENDER_ADDRESS = parseAbi([
  'function getSenderAddress(bytes initCode)',
  'error SenderAddressResult(address sender)',
]);

function ttlOf(entry: Entry): number {
  if (entry.kind === 'word') return SHORT_TTL_MS;
  if (entry.value === undefined) return 0;
  if (entry.kind === 'sender') return CODE_TTL_MS;
  return entry.value.delegate === undefined ? CODE_TTL_MS : SHORT_TTL_MS;
}

export function createChainReads(args: { readonly maxEntries: number; readonly now?: () => number }): ChainReads {
  const cache = createTtlCache<Entry>({
    ttlMs: 0,
    maxEntries: args.maxEntries,
    ttlOf,
    ...(args.now === undefined ? {} : { now: args.now }),
  });
  const read = async <T>(what: string, load: () => Promise<T>): Promise<T> => {
    try {
      return await load();
    } catch (err) {
      throw new UnavailableError(`The chain could not be read for ${what}`, { cause: err });
    }
  };

  return {
    async code(chain, address) {
      const key = `${chain.chainId}|c|${address.toLowerCase()}`;
      const entry = await cache.get(key, async (): Promise<Entry> => {
        const code = await read('the sender’s code', () => chain.client.getCode({ address }));
        if (code === undefined || code === '0x') return { kind: 'code', value: undefined };
        return { kind: 'code', value: { codeHash: keccak256(code), delegate: delegateOfCode(code) } };
      });
      return entry.kind === 'code' ? entry.value : undefined;
    },

    async storage(chain, address, slot) {
      const key = `${chain.chainId}|s|${address.toLowerCase()}|${slot.toLowerCase()}`;
      const entry = await cache.get(key, async (): Promise<Entry> => {
        const word = await read('a proxy’s implementation', () => chain.client.getStorageAt({ address, slot }));
        return { kind: 'word', value: word ?? `0x${'0'.repeat(64)}` };
      });
      return entry.kind === 'word' ? entry.value : `0x${'0'.repeat(64)}`;
    },

    async senderOfInitCode(chain, initCode) {
      const key = `${chain.chainId}|i|${chain.entryPoint.toLowerCase()}|${keccak256(initCode)}`;
      const entry = await cache.get(key, async (): Promise<Entry> => {
        const data = encodeFunctionData({
          abi: GET_SENDER_ADDRESS,
          functionName: 'getSenderAddress',
          args: [initCode],
        });
        let revert: Hex | undefined;
        try {
          await chain.request({ method: 'eth_call', params: [{ to: chain.entryPoint, data }, 'latest'] });
        } catch (err) {
          revert = findRevertData(err);
          if (revert === undefined)
            throw new UnavailableError('The chain could not be read for the initCode’s sender', { cause: err });
        }
        try {
          const decoded =
            revert === undefined ? undefined : decodeErrorResult({ abi: GET_SENDER_ADDRESS, data: revert });
          return { kind: 'sender', value: decoded === undefined ? undefined : getAddress(decoded.args[0]) };
        } catch {
          // The factory reverted (or answered something else): no sender it vouches for.
          return { kind: 'sender', value: undefined };
        }
      });
      return entry.kind === 'sender' ? entry.value : undefined;
    },
  };
}

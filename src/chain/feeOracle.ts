import type { ChainRuntime } from './chainRegistry.js';
import { type L1Fee, readL1Fee } from './readL1Fee.js';

/**
 * The chain's current base fee and suggested tip, which the signing bounds compare an op's fees against.
 * Read at most once per `refreshMs` per chain (a block or so), whatever the request rate: a request reads the
 * cached value, and one that finds it older than `refreshMs` starts one refresh in the background, shared by
 * every request that comes meanwhile. Only when the value is older than `maxAgeMs` (the chain stopped
 * answering) does a request wait for a fresh read, and if that fails it gets nothing: the caller denies.
 */
export interface ChainFees {
  readonly baseFee: bigint;
  /** The node's `eth_maxPriorityFeePerGas` (0 when the node has no such method). */
  readonly tip: bigint;
  readonly blockNumber: bigint;
  /**
   * The latest block's timestamp (unix seconds): the chain's own time, which validity windows are set by
   * (paymaster/validityWindows.ts) and Patron's simulations run at. Read with the base fee, no request more;
   * undefined if the node left it out (windows then follow the server's clock alone).
   */
  readonly timestamp: number | undefined;
  /**
   * On an L2 with an L1 fee oracle (chain.l1Fee): its L1 data fee inputs at this block, read with the tip (one eth_call
   * per new block), which the preVerificationGas bound is computed from (paymaster/l1DataGas.ts). Part of the read:
   * when they cannot be read, the chain's fees cannot either, so a stale L1 fee is never used past `maxAgeMs`.
   */
  readonly l1?: L1Fee | undefined;
  /** When it was read (ms). */
  readonly readAt: number;
}

export interface FeeOracle {
  /** Fresh-enough fees of the chain, or undefined when they cannot be read. */
  get(chain: ChainRuntime): Promise<ChainFees | undefined>;
}

export interface FeeOracleOptions {
  readonly refreshMs: number;
  readonly maxAgeMs: number;
  readonly now: () => number;
  readonly onError?: (chainId: number, err: unknown) => void;
}

interface Slot {
  fees: ChainFees | undefined;
  refreshing: Promise<ChainFees | undefined> | undefined;
}

const hexToBig = (v: unknown): bigint | undefined =>
  typeof v === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(v) ? BigInt(v) : undefined;

async function readFees(chain: ChainRuntime, last: ChainFees | undefined, now: number): Promise<ChainFees> {
  const block = (await chain.request({ method: 'eth_getBlockByNumber', params: ['latest', false] })) as {
    baseFeePerGas?: unknown;
    number?: unknown;
    timestamp?: unknown;
  } | null;
  const baseFee = hexToBig(block?.baseFeePerGas);
  const blockNumber = hexToBig(block?.number);
  const time = hexToBig(block?.timestamp);
  // A chain without EIP-1559 has no base fee: the bounds cannot be applied, so it is treated as unreadable.
  if (baseFee === undefined || blockNumber === undefined) throw new Error('latest block has no baseFeePerGas');
  const timestamp = time === undefined ? undefined : Number(time);
  // The tip and the L1 fee change with blocks, not with time: on the same block the last answers stand.
  if (last !== undefined && last.blockNumber === blockNumber) return { ...last, baseFee, timestamp, readAt: now };
  const [tip, l1] = await Promise.all([
    readTip(chain),
    chain.l1Fee === undefined ? undefined : readL1Fee(chain, chain.l1Fee, blockNumber),
  ]);
  return { baseFee, tip, blockNumber, timestamp, l1, readAt: now };
}

async function readTip(chain: ChainRuntime): Promise<bigint> {
  try {
    return hexToBig(await chain.request({ method: 'eth_maxPriorityFeePerGas' })) ?? 0n;
  } catch {
    // Not every node has it; the bounds' tip floor then applies alone.
    return 0n;
  }
}

export function createFeeOracle(opts: FeeOracleOptions): FeeOracle {
  const slots = new Map<number, Slot>();

  const refresh = (chain: ChainRuntime, slot: Slot): Promise<ChainFees | undefined> => {
    slot.refreshing ??= readFees(chain, slot.fees, opts.now())
      .then((fees) => {
        slot.fees = fees;
        return fees;
      })
      .catch((err: unknown) => {
        opts.onError?.(chain.chainId, err);
        return undefined;
      })
      .finally(() => {
        slot.refreshing = undefined;
      });
    return slot.refreshing;
  };

  return {
    async get(chain) {
      let slot = slots.get(chain.chainId);
      if (slot === undefined) {
        slot = { fees: undefined, refreshing: undefined };
        slots.set(chain.chainId, slot);
      }
      const fees = slot.fees;
      const age = fees === undefined ? Number.POSITIVE_INFINITY : opts.now() - fees.readAt;
      if (age < opts.refreshMs) return fees;
      if (age < opts.maxAgeMs) {
        void refresh(chain, slot);
        return fees;
      }
      return refresh(chain, slot);
    },
  };
}

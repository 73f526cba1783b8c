import { type Address, decodeFunctionResult, encodeFunctionData, type Hex, parseAbi, zeroAddress } from 'viem';
import type { L1FeeKind } from '../config/l1FeeSettings.js';
import type { ChainRuntime } from './chainRegistry.js';

/**
 * The inputs of an L2's L1 data fee at one block, read from the chain's own oracle (PATRON_CHAINS[i].l1Fee), which is
 * where bundlers read it too: the preVerificationGas bound is then a pure computation from them
 * (paymaster/l1DataGas.ts). One eth_call per read; feeOracle.ts reads it with each new block's fees.
 */
export type L1Fee = OpStackL1Fee | ArbitrumL1Fee;

/**
 * An OP-stack chain's L1 fee parameters, as its GasPriceOracle predeploy serves them (proxied from L1Block, which the
 * sequencer's first transaction of each L2 block sets from L1): the fee of a transaction's data is
 * `size × (16 × baseFeeScalar × l1BaseFee + blobBaseFeeScalar × blobBaseFee)`, the size Fjord's FastLZ estimate or
 * Ecotone's calldata gas.
 */
export interface OpStackL1Fee {
  readonly kind: 'opStack';
  readonly l1BaseFee: bigint;
  readonly blobBaseFee: bigint;
  readonly baseFeeScalar: bigint;
  readonly blobBaseFeeScalar: bigint;
  /** Fjord's pricing (every Superchain chain since July 2024); Ecotone's calldata-gas pricing when false. */
  readonly fjord: boolean;
}

/** An Arbitrum Nitro chain's L1 pricing, as NodeInterface.gasEstimateL1Component reports it. */
export interface ArbitrumL1Fee {
  readonly kind: 'arbitrum';
  /** ArbOS's price of one L1 calldata unit (16 per byte of brotli-compressed transaction): `l1BaseFeeEstimate`. */
  readonly l1PricePerUnit: bigint;
  /** The L2 base fee the node divides the L1 fee by to give it in L2 gas (its `baseFee`). */
  readonly l2BaseFee: bigint;
}

/** The OP stack's GasPriceOracle predeploy. */
export const OP_GAS_PRICE_ORACLE: Address = '0x420000000000000000000000000000000000000F';
/** Arbitrum's NodeInterface: a virtual contract the node answers eth_call to, absent from the state. */
export const ARBITRUM_NODE_INTERFACE: Address = '0x00000000000000000000000000000000000000C8';

export const opGasPriceOracleAbi = parseAbi([
  'function l1BaseFee() view returns (uint256)',
  'function blobBaseFee() view returns (uint256)',
  'function baseFeeScalar() view returns (uint32)',
  'function blobBaseFeeScalar() view returns (uint32)',
  'function isFjord() view returns (bool)',
]);

export const nodeInterfaceAbi = parseAbi([
  'function gasEstimateL1Component(address to, bool contractCreation, bytes data) returns (uint64 gasEstimateForL1, uint256 baseFee, uint256 l1BaseFeeEstimate)',
]);

/** The chain's L1 fee inputs at `blockNumber`; throws when the oracle does not answer as expected. */
export function readL1Fee(chain: ChainRuntime, kind: L1FeeKind, blockNumber: bigint): Promise<L1Fee> {
  return kind === 'opStack' ? readOpStack(chain, blockNumber) : readArbitrum(chain, blockNumber);
}

/**
 * The five getters in one eth_call: viem's deployless Multicall3 (its bytecode run as the call's init code), which
 * needs no Multicall3 deployed on the chain. A GasPriceOracle from before Ecotone has no scalars: that reverts, and
 * the read fails with it.
 */
async function readOpStack(chain: ChainRuntime, blockNumber: bigint): Promise<OpStackL1Fee> {
  const call = <F extends 'l1BaseFee' | 'blobBaseFee' | 'baseFeeScalar' | 'blobBaseFeeScalar' | 'isFjord'>(
    functionName: F,
  ) => ({ address: OP_GAS_PRICE_ORACLE, abi: opGasPriceOracleAbi, functionName }) as const;
  const [l1BaseFee, blobBaseFee, baseFeeScalar, blobBaseFeeScalar, fjord] = await chain.client.multicall({
    contracts: [
      call('l1BaseFee'),
      call('blobBaseFee'),
      call('baseFeeScalar'),
      call('blobBaseFeeScalar'),
      call('isFjord'),
    ],
    allowFailure: false,
    deployless: true,
    blockNumber,
  });
  return {
    kind: 'opStack',
    l1BaseFee,
    blobBaseFee,
    baseFeeScalar: BigInt(baseFeeScalar),
    blobBaseFeeScalar: BigInt(blobBaseFeeScalar),
    fjord,
  };
}

/**
 * NodeInterface is reachable only by a direct eth_call (a multicall's inner call finds no code there). Its figures
 * do not depend on the data given, so an empty call to the zero address reads them, as Rundler's cached Nitro
 * oracle does.
 */
async function readArbitrum(chain: ChainRuntime, blockNumber: bigint): Promise<ArbitrumL1Fee> {
  const data = encodeFunctionData({
    abi: nodeInterfaceAbi,
    functionName: 'gasEstimateL1Component',
    args: [zeroAddress, false, '0x'],
  });
  const result = (await chain.request({
    method: 'eth_call',
    params: [{ to: ARBITRUM_NODE_INTERFACE, data }, `0x${blockNumber.toString(16)}`],
  })) as Hex;
  const [, l2BaseFee, l1PricePerUnit] = decodeFunctionResult({
    abi: nodeInterfaceAbi,
    functionName: 'gasEstimateL1Component',
    data: result,
  });
  // Nitro divides by this base fee; zero would make every L1 fee infinite gas.
  if (l2BaseFee === 0n) throw new Error('NodeInterface.gasEstimateL1Component reported an L2 base fee of 0');
  return { kind: 'arbitrum', l1PricePerUnit, l2BaseFee };
}

import {
  type Address,
  concat,
  encodeFunctionData,
  encodePacked,
  type Hex,
  hexToBigInt,
  parseAbi,
  parseEther,
  toFunctionSelector,
  toHex,
} from 'viem';
import type { DevChain } from '../../src/chain/embeddedChain.js';
import { ARBITRUM_NODE_INTERFACE } from '../../src/chain/readL1Fee.js';
import { compileSolidity } from './compileSolidity.js';

/**
 * The L2 fee oracles the L1-fee tests move, through the interfaces the real chains use:
 * - OP stack: EDR's OP chain type installs the real L1Block and GasPriceOracle predeploys (GasPriceOracle 1.4.0,
 *   Isthmus). On an OP chain the sequencer's first transaction of each L2 block, sent by the depositor account, calls
 *   L1Block's `setL1BlockValuesIsthmus()` with the L1 values packed into its calldata; the tests send that same call
 *   from the depositor (impersonated). EDR's genesis writes the fee scalars at the wrong offset of their slot (they
 *   read 0, so every L1 fee is 0), which the first call fixes.
 * - Arbitrum: EDR has no Arbitrum chain type, and NodeInterface is a virtual contract answered by the Nitro node
 *   itself; NodeInterfaceStandIn answers `gasEstimateL1Component` at its address (placed with hardhat_setCode) by
 *   Nitro's formula (nitro: GasEstimateL1Component, PosterDataCost) on the data left uncompressed, which is the most
 *   a Nitro node answers (brotli only shrinks a transaction's data, by a few bytes at most does it grow it).
 */
const DEPOSITOR: Address = '0xDeaDDEaDDeAdDeAdDEAdDEaddeAddEAdDEAd0001';
const L1_BLOCK: Address = '0x4200000000000000000000000000000000000015';

/** The L1 values a block carries on an OP-stack chain: its fee inputs (the scalars are a chain's own settings). */
export interface OpL1Values {
  readonly l1BaseFee: bigint;
  readonly blobBaseFee: bigint;
  readonly baseFeeScalar: number;
  readonly blobBaseFeeScalar: number;
}

/** Base mainnet's fee scalars (its SystemConfig since Ecotone). */
export const BASE_SCALARS = { baseFeeScalar: 2269, blobBaseFeeScalar: 1_055_762 } as const;

let l1Number = 20_000_000n;

/** Writes L1 values into L1Block as the sequencer does at the start of an L2 block (a block is mined for it). */
export async function setOpL1Values(dev: DevChain, v: OpL1Values): Promise<void> {
  await dev.client.impersonateAccount({ address: DEPOSITOR });
  await dev.client.setBalance({ address: DEPOSITOR, value: parseEther('1') });
  l1Number += 1n;
  const data = concat([
    toFunctionSelector('setL1BlockValuesIsthmus()'),
    encodePacked(
      [
        'uint32',
        'uint32',
        'uint64',
        'uint64',
        'uint64',
        'uint256',
        'uint256',
        'bytes32',
        'bytes32',
        'uint32',
        'uint64',
      ],
      [
        v.baseFeeScalar,
        v.blobBaseFeeScalar,
        0n, // sequence number: the first L2 block of the epoch
        1_750_000_000n + l1Number * 12n,
        l1Number,
        v.l1BaseFee,
        v.blobBaseFee,
        toHex(l1Number, { size: 32 }),
        toHex(0n, { size: 32 }),
        0, // operator fee (Isthmus), 0 on Base and Optimism
        0n,
      ],
    ),
  ]);
  const hash = (await dev.chain.request({
    method: 'eth_sendTransaction',
    params: [{ from: DEPOSITOR, to: L1_BLOCK, data, gas: toHex(200_000n) }],
  })) as Hex;
  await dev.client.stopImpersonatingAccount({ address: DEPOSITOR });
  const receipt = (await dev.chain.request({ method: 'eth_getTransactionReceipt', params: [hash] })) as {
    status: Hex;
  };
  if (receipt.status !== '0x1') throw new Error('L1Block refused the L1 values');
}

const NODE_INTERFACE_STAND_IN = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;
/// NodeInterface.gasEstimateL1Component as a Nitro node answers it, for the data uncompressed (its most).
contract NodeInterfaceStandIn {
  uint256 public l1BaseFeeEstimate;
  uint256 public l2BaseFee;
  function set(uint256 l1PricePerUnit, uint256 baseFee) external {
    l1BaseFeeEstimate = l1PricePerUnit;
    l2BaseFee = baseFee;
  }
  function gasEstimateL1Component(address, bool, bytes calldata data)
    external view returns (uint64 gasEstimateForL1, uint256 baseFee, uint256 l1BaseFee) {
    // Nitro wraps the data in a fake EIP-1559 transaction (~128 bytes besides it) and prices 16 units a byte of
    // it compressed, +256 units and 1 % (estimation padding), then 10 % on the fee, over its L2 base fee.
    uint256 units = 16 * (data.length + 128);
    units = (units + 256) * 10100 / 10000;
    uint256 fee = units * l1BaseFeeEstimate * 11000 / 10000;
    return (uint64(fee / l2BaseFee), l2BaseFee, l1BaseFeeEstimate);
  }
}`;

const standInAbi = parseAbi(['function set(uint256 l1PricePerUnit, uint256 baseFee)']);

/** Arbitrum's L1 pricing as NodeInterface reports it: the price per L1 calldata unit and the L2 base fee. */
export interface ArbitrumL1Values {
  readonly l1PricePerUnit: bigint;
  readonly l2BaseFee: bigint;
}

/** Puts NodeInterfaceStandIn at NodeInterface's address, with these values. */
export async function installNodeInterface(dev: DevChain, v: ArbitrumL1Values): Promise<void> {
  const { deployedBytecode } = compileSolidity({ source: NODE_INTERFACE_STAND_IN, name: 'NodeInterfaceStandIn' });
  await dev.client.setCode({ address: ARBITRUM_NODE_INTERFACE, bytecode: deployedBytecode });
  await setArbitrumL1Values(dev, v);
}

/** Sets the L1 price (and L2 base fee) NodeInterface reports from the next block on. */
export async function setArbitrumL1Values(dev: DevChain, v: ArbitrumL1Values): Promise<void> {
  const hash = await dev.client.sendTransaction({
    to: ARBITRUM_NODE_INTERFACE,
    data: encodeFunctionData({ abi: standInAbi, functionName: 'set', args: [v.l1PricePerUnit, v.l2BaseFee] }),
  });
  const receipt = (await dev.chain.request({ method: 'eth_getTransactionReceipt', params: [hash] })) as {
    status: Hex;
  };
  if (hexToBigInt(receipt.status) !== 1n) throw new Error('NodeInterfaceStandIn.set failed');
}

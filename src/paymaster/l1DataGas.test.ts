import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChainFees } from '../chain/feeOracle.js';
import type { ArbitrumL1Fee, OpStackL1Fee } from '../chain/readL1Fee.js';
import { DEFAULT_SIGNING_BOUNDS } from '../config/boundsSettings.js';
import { finalUserOperation } from './entryPoints/entryPointModule.js';
import { entryPointModule } from './entryPoints/entryPointModules.js';
import { packedCount } from './entryPoints/v07/preVerificationGasV07.js';
import {
  arbitrumL1Gas,
  EIP7702_AUTH_BYTES,
  HANDLE_OPS_FRAME_BYTES,
  l1DataGas,
  l1DataPricing,
  l2GasPrice,
  opStackL1FeeUpperBound,
  SIGNED_TX_BYTES,
} from './l1DataGas.js';

/**
 * The L1 data's gas from the chain's L1 fee, as pure arithmetic. The OP-stack figures are the real GasPriceOracle's
 * (1.4.0, read on EDR's OP genesis with these values; test/l1Fee.opStack.test.ts holds the formula to the contract
 * size for size); the Arbitrum one is Nitro's GasEstimateL1Component worked by hand.
 */
const BASE_LIKE: OpStackL1Fee = {
  kind: 'opStack',
  l1BaseFee: 10_000_000_000n,
  blobBaseFee: 1_000_000_000n,
  baseFeeScalar: 2269n,
  blobBaseFeeScalar: 1_055_762n,
  fjord: true,
};
const ARBITRUM: ArbitrumL1Fee = { kind: 'arbitrum', l1PricePerUnit: 100_000_000n, l2BaseFee: 10_000_000n };

describe('the oracles’ formulas', () => {
  test("Fjord: getL1FeeUpperBound's values, the 100-byte floor for small transactions", () => {
    assert.equal(opStackL1FeeUpperBound(BASE_LIKE, 1_000n), 1_230_848_191_372n);
    assert.equal(opStackL1FeeUpperBound(BASE_LIKE, 0n), 141_880_200_000n);
    assert.equal(opStackL1FeeUpperBound(BASE_LIKE, 50n), 141_880_200_000n);
  });

  test('Ecotone: every byte at 16 gas of L1 calldata, 68 more for the signature', () => {
    // (1000 + 68) × (16 × 2269 × 10 gwei + 1,055,762 × 1 gwei) / 10^6
    assert.equal(opStackL1FeeUpperBound({ ...BASE_LIKE, fjord: false }, 1_000n), 1_515_280_536_000n);
  });

  test('Nitro: 16 units a byte of the data in its own transaction, +256 units and 1 %, +10 % on the fee, over its base fee', () => {
    // units 16 × (1000 + 150 + 16) = 18,656; padded ⌈18,912 × 1.01⌉ = 19,102; fee ⌈19,102 × 0.1 gwei × 1.1⌉;
    // over 0.01 gwei: 210,122 gas.
    assert.equal(arbitrumL1Gas(ARBITRUM, 1_000n), 210_122n);
    assert.equal(arbitrumL1Gas({ ...ARBITRUM, l1PricePerUnit: ARBITRUM.l1PricePerUnit * 10n }, 1_000n), 2_101_220n);
  });
});

describe('the L2 gas price the L1 fee is divided by', () => {
  const fees = { baseFee: 100n, tip: 10n };
  test("the lowest a bundler uses: the op's price with the tip at most the chain's", () => {
    assert.equal(l2GasPrice({ maxFeePerGas: 1_000n, maxPriorityFeePerGas: 5n }, fees), 105n);
    assert.equal(l2GasPrice({ maxFeePerGas: 1_000n, maxPriorityFeePerGas: 50n }, fees), 110n);
    assert.equal(l2GasPrice({ maxFeePerGas: 102n, maxPriorityFeePerGas: 50n }, fees), 102n);
  });
  test("an op not priced yet takes the chain's price; never 0", () => {
    assert.equal(l2GasPrice({ maxFeePerGas: 0n, maxPriorityFeePerGas: 0n }, fees), 110n);
    assert.equal(l2GasPrice({ maxFeePerGas: 0n, maxPriorityFeePerGas: 0n }, { baseFee: 0n, tip: 0n }), 1n);
  });
});

const chainFees = (l1?: OpStackL1Fee | ArbitrumL1Fee): ChainFees => ({
  baseFee: 1_000_000n,
  tip: 1_000_000n,
  blockNumber: 1n,
  timestamp: undefined,
  l1,
  readAt: 0,
});
const opFees = { maxFeePerGas: 3_000_000n, maxPriorityFeePerGas: 1_000_000n };

describe('one op’s L1 data gas', () => {
  test('no oracle: l1DataGasPerByte per byte of the op, none at all when it is 0 (an L1)', () => {
    assert.equal(l1DataPricing({ bounds: DEFAULT_SIGNING_BOUNDS, fees: chainFees(), op: opFees }), undefined);
    const bounds = { ...DEFAULT_SIGNING_BOUNDS, l1DataGasPerByte: 120n };
    const pricing = l1DataPricing({ bounds, fees: chainFees(), op: opFees });
    assert.deepEqual(pricing, { gasPerByte: 120n });
    assert.ok(pricing);
    assert.equal(l1DataGas(pricing, { bytes: 900, eip7702: false }), 108_000n);
  });

  test("OP stack: the bundle transaction's upper bound over the divisor, rounded up; an EIP-7702 authorization adds its bytes", () => {
    const pricing = l1DataPricing({ bounds: DEFAULT_SIGNING_BOUNDS, fees: chainFees(BASE_LIKE), op: opFees });
    assert.deepEqual(pricing, { gasPerByte: 0n, oracle: { fee: BASE_LIKE, l2GasPrice: 2_000_000n } });
    assert.ok(pricing);
    const tx = 900n + HANDLE_OPS_FRAME_BYTES + SIGNED_TX_BYTES;
    const fee = opStackL1FeeUpperBound(BASE_LIKE, tx);
    assert.equal(l1DataGas(pricing, { bytes: 900, eip7702: false }), (fee + 1_999_999n) / 2_000_000n);
    const authorized = opStackL1FeeUpperBound(BASE_LIKE, tx + EIP7702_AUTH_BYTES);
    assert.equal(l1DataGas(pricing, { bytes: 900, eip7702: true }), (authorized + 1_999_999n) / 2_000_000n);
  });

  test('the figure follows the L1 fee: ×10 on both L1 prices is ×10 on the gas', () => {
    const at = (fee: OpStackL1Fee) => {
      const pricing = l1DataPricing({ bounds: DEFAULT_SIGNING_BOUNDS, fees: chainFees(fee), op: opFees });
      assert.ok(pricing);
      return l1DataGas(pricing, { bytes: 900, eip7702: false });
    };
    const calm = at(BASE_LIKE);
    const spike = at({ ...BASE_LIKE, l1BaseFee: BASE_LIKE.l1BaseFee * 10n, blobBaseFee: BASE_LIKE.blobBaseFee * 10n });
    assert.ok(spike >= calm * 10n - 10n && spike <= calm * 10n, `${calm} → ${spike}`);
  });

  test('Arbitrum: the data bundlers send (the signed transaction) inside the node’s own; the L2 price is the node’s', () => {
    const pricing = l1DataPricing({ bounds: DEFAULT_SIGNING_BOUNDS, fees: chainFees(ARBITRUM), op: opFees });
    assert.ok(pricing);
    const data = 900n + HANDLE_OPS_FRAME_BYTES + SIGNED_TX_BYTES;
    assert.equal(l1DataGas(pricing, { bytes: 900, eip7702: false }), arbitrumL1Gas(ARBITRUM, data));
  });

  test('l1DataGasPerByte is the ceiling of the oracle’s figure when set', () => {
    const fees = chainFees(ARBITRUM);
    const uncapped = l1DataGas(
      { gasPerByte: 0n, oracle: { fee: ARBITRUM, l2GasPrice: 1n } },
      { bytes: 900, eip7702: false },
    );
    const low = l1DataPricing({ bounds: { ...DEFAULT_SIGNING_BOUNDS, l1DataGasPerByte: 100n }, fees, op: opFees });
    const high = l1DataPricing({ bounds: { ...DEFAULT_SIGNING_BOUNDS, l1DataGasPerByte: 10_000n }, fees, op: opFees });
    assert.ok(low && high);
    assert.ok(uncapped > 90_000n);
    assert.equal(l1DataGas(low, { bytes: 900, eip7702: false }), 90_000n);
    assert.equal(l1DataGas(high, { bytes: 900, eip7702: false }), uncapped);
  });
});

describe('in the EntryPoint modules', () => {
  test("Patron's figure is the version's own plus the L1 data of the op's encoding in handleOps", () => {
    const ep = entryPointModule('0.7');
    const fields = ep.stub({
      chain: { chainId: 10, entryPoint: `0x${'44'.repeat(20)}`, paymaster: `0x${'55'.repeat(20)}` } as never,
      window: { validUntil: 0x8101_0101_0101, validAfter: 0x8101_0101_0101 },
      authorization: { mode: 'SPONSORED' },
    });
    const op = finalUserOperation(
      {
        sender: `0x${'33'.repeat(20)}`,
        nonce: 0n,
        initCode: '0x',
        callData: `0x${'ab'.repeat(100)}`,
        callGasLimit: undefined,
        verificationGasLimit: undefined,
        preVerificationGas: undefined,
        ...opFees,
        signature: '0x',
        eip7702Auth: undefined,
      },
      {},
      fields,
    );
    const pricing = l1DataPricing({ bounds: DEFAULT_SIGNING_BOUNDS, fees: chainFees(BASE_LIKE), op });
    assert.ok(pricing);
    const own = ep.preVerificationGas({ op, fields });
    assert.equal(ep.preVerificationGas({ op, fields, l1: undefined }), own);
    const bytes = packedCount(
      {
        sender: op.sender,
        nonce: op.nonce,
        callData: op.callData,
        callGasLimit: 0n,
        verificationGasLimit: 0n,
        preVerificationGas: 0n,
        maxFeePerGas: op.maxFeePerGas,
        maxPriorityFeePerGas: op.maxPriorityFeePerGas,
        paymaster: fields.paymaster,
        paymasterVerificationGasLimit: 0n,
        paymasterPostOpGasLimit: 0n,
        paymasterData: fields.paymasterData,
        signature: `0x${'00'.repeat(65)}`,
      },
      'max',
    ).bytes;
    assert.equal(
      ep.preVerificationGas({ op, fields, l1: pricing }),
      own + l1DataGas(pricing, { bytes, eip7702: false }),
    );
  });
});

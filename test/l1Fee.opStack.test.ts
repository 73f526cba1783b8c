import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { concat, encodeFunctionData, maxUint64, pad, parseAbi, serializeTransaction, size, toHex } from 'viem';
import { entryPoint06Abi, entryPoint07Abi, toPackedUserOperation } from 'viem/account-abstraction';
import { forEntryPointVersion } from '../src/chain/chainRegistry.js';
import { OP_GAS_PRICE_ORACLE, type OpStackL1Fee, readL1Fee } from '../src/chain/readL1Fee.js';
import { DEFAULT_SIGNING_BOUNDS } from '../src/config/boundsSettings.js';
import {
  type FinalUserOperation,
  finalUserOperation,
  type PaymasterFields,
} from '../src/paymaster/entryPoints/entryPointModule.js';
import { entryPointModule } from '../src/paymaster/entryPoints/entryPointModules.js';
import { l1DataPricing, opStackL1FeeUpperBound } from '../src/paymaster/l1DataGas.js';
import { chainFees } from '../src/paymaster/signingBounds.js';
import { createSizingFields } from '../src/paymaster/sponsored/sizingFields.js';
import { type L1FeeE2e, paymasterData, startL1FeeE2e, throughSpikeAndFall } from './helpers/l1FeeE2e.js';
import { BASE_SCALARS, type OpL1Values, setOpL1Values } from './helpers/l1FeeOracles.js';
import { toViemOperation } from './helpers/simpleAccountV07.js';
import { createTenant, type Tenant } from './helpers/testContext.js';

/**
 * preVerificationGas bounds on an OP-stack L2 (docs/guides/signing-bounds.md, "L1 data on L2s"): EDR's OP chain type
 * with its real GasPriceOracle and L1Block, the L1 values written by the depositor as the sequencer writes them, and
 * alto (--chain-type op-stack) pricing each op's L1 data from that oracle. Patron (`l1Fee: "opStack"`) signs what alto
 * asks at the L1 fee of the moment, through a ×10 spike, and refuses a spike-sized preVerificationGas once the fee is
 * back down.
 */
// L1 prices at which an op's L1 data costs about what its execution does (~60,000 gas at the dev chain's ~1 gwei), so
// that the ×10 spike moves alto's figure several times over, within the default maxPreVerificationGas.
const CALM: OpL1Values = { ...BASE_SCALARS, l1BaseFee: 20_000_000_000n, blobBaseFee: 200_000_000_000n };
const SPIKE: OpL1Values = { ...CALM, l1BaseFee: CALM.l1BaseFee * 10n, blobBaseFee: CALM.blobBaseFee * 10n };

let e2e: L1FeeE2e;
before(async () => {
  e2e = await startL1FeeE2e({
    chainType: 'opStack',
    l1Fee: 'opStack',
    setUp: (fx) => setOpL1Values(fx, CALM),
  });
});
after(() => e2e?.close());

const toBig = (v: OpL1Values) => ({
  l1BaseFee: v.l1BaseFee,
  blobBaseFee: v.blobBaseFee,
  baseFeeScalar: BigInt(v.baseFeeScalar),
  blobBaseFeeScalar: BigInt(v.blobBaseFeeScalar),
});

describe('the GasPriceOracle as Patron reads and prices it', () => {
  test("Patron's upper bound of the L1 fee is the oracle's own getL1FeeUpperBound, size for size", async () => {
    const oracleAbi = parseAbi(['function getL1FeeUpperBound(uint256) view returns (uint256)']);
    for (const values of [CALM, SPIKE]) {
      await setOpL1Values(e2e.fx, values);
      // Uncached: viem keeps a block number for its polling interval (4 s), older than the values just written.
      const block = await e2e.fx.client.getBlockNumber({ cacheTime: 0 });
      const chain = e2e.ctx.deps.chains.list()[0];
      assert.ok(chain);
      const fee = await readL1Fee(chain, 'opStack', block);
      assert.deepEqual(fee, { kind: 'opStack', ...toBig(values), fjord: true });
      for (const n of [0n, 30n, 100n, 677n, 1_000n, 4_321n, 30_000n]) {
        const onChain = await e2e.fx.client.readContract({
          address: OP_GAS_PRICE_ORACLE,
          abi: oracleAbi,
          functionName: 'getL1FeeUpperBound',
          args: [n],
        });
        assert.equal(opStackL1FeeUpperBound(fee as OpStackL1Fee, n), onChain, `size ${n}`);
      }
    }
    await setOpL1Values(e2e.fx, CALM);
  });
});

/**
 * What a bundler's oracle charges the bundle transaction of one op, priced as alto prices it (calcOptimismPvg): the
 * handleOps call with the op's gas fields random (as it estimates) in an EIP-1559 transaction with every field at 8
 * bytes and a signature, given whole to getL1Fee, which compresses it (FastLZ) and adds 68 bytes.
 */
async function bundleL1Fee(version: '0.6' | '0.7', op: FinalUserOperation, fields: PaymasterFields): Promise<bigint> {
  const entryPoint = e2e.fx.entryPoints[version];
  const gas = () => BigInt(randomBytes(3).readUIntBE(0, 3));
  const data =
    version === '0.6'
      ? encodeFunctionData({
          abi: entryPoint06Abi,
          functionName: 'handleOps',
          args: [
            [
              {
                ...op,
                callGasLimit: gas(),
                verificationGasLimit: gas(),
                preVerificationGas: gas(),
                paymasterAndData: fields.paymasterAndData,
              },
            ],
            entryPoint,
          ],
        })
      : encodeFunctionData({
          abi: entryPoint07Abi,
          functionName: 'handleOps',
          args: [
            [
              {
                sender: op.sender,
                nonce: op.nonce,
                initCode: op.initCode,
                callData: op.callData,
                accountGasLimits: concat([pad(toHex(gas()), { size: 16 }), pad(toHex(gas()), { size: 16 })]),
                preVerificationGas: gas(),
                gasFees: concat([
                  pad(toHex(op.maxPriorityFeePerGas), { size: 16 }),
                  pad(toHex(op.maxFeePerGas), { size: 16 }),
                ]),
                paymasterAndData: fields.paymasterAndData,
                signature: op.signature,
              },
            ],
            entryPoint,
          ],
        });
  const tx = serializeTransaction(
    {
      chainId: e2e.fx.chain.chainId,
      to: entryPoint,
      data,
      nonce: 999_999,
      gas: maxUint64,
      maxFeePerGas: maxUint64,
      maxPriorityFeePerGas: maxUint64,
    },
    { r: toHex(randomBytes(32)), s: toHex(randomBytes(32)), yParity: 1 },
  );
  const oracleAbi = parseAbi(['function getL1Fee(bytes) view returns (uint256)']);
  return e2e.fx.client.readContract({
    address: OP_GAS_PRICE_ORACLE,
    abi: oracleAbi,
    functionName: 'getL1Fee',
    args: [tx],
  });
}

describe("Patron's L1 part against the oracle's charge for the bundle transaction", () => {
  test('at least the fee over the divisor, on v0.6 and v0.7, for compressible and random (incompressible) op data', async () => {
    await setOpL1Values(e2e.fx, SPIKE);
    const chain = e2e.ctx.deps.chains.list()[0];
    assert.ok(chain);
    const fees = await chainFees(e2e.ctx.deps.fees, chain);
    assert.ok(fees.l1, 'the fee read brought the L1 fee');
    const random = (n: number) => toHex(randomBytes(n));
    const zeros = (n: number) => toHex(new Uint8Array(n));
    const shapes = [
      { initCode: '0x', callData: '0x', signature: random(65) },
      { initCode: concat([e2e.fx.simpleAccountFactory, random(68)]), callData: random(100), signature: random(65) },
      { initCode: '0x', callData: zeros(2_000), signature: random(65) },
      { initCode: '0x', callData: random(1_000), signature: random(192) },
      { initCode: concat([e2e.fx.simpleAccountFactory, random(500)]), callData: random(6_000), signature: random(65) },
    ] as const;
    for (const version of ['0.6', '0.7'] as const) {
      const view = forEntryPointVersion(chain, version);
      assert.ok(view);
      const ep = entryPointModule(version);
      const fields = createSizingFields({ mode: 'SPONSORED' })(view, false);
      for (const [i, shape] of shapes.entries()) {
        const op = finalUserOperation(
          {
            sender: e2e.fx.simpleAccountFactory,
            nonce: 5n,
            ...shape,
            callGasLimit: undefined,
            verificationGasLimit: undefined,
            preVerificationGas: undefined,
            maxFeePerGas: fees.baseFee * 2n + fees.tip,
            maxPriorityFeePerGas: fees.tip,
            eip7702Auth: undefined,
          },
          {},
          fields,
        );
        const l1 = l1DataPricing({ bounds: DEFAULT_SIGNING_BOUNDS, fees, op });
        assert.ok(l1?.oracle);
        const l1Gas = ep.preVerificationGas({ op, fields, l1 }) - ep.preVerificationGas({ op, fields });
        const charged = await bundleL1Fee(version, op, fields);
        const needed = (charged + l1.oracle.l2GasPrice - 1n) / l1.oracle.l2GasPrice;
        assert.ok(l1Gas >= needed, `v${version} shape ${i}: Patron ${l1Gas} < the oracle's ${needed}`);
        // Not far above it either for data that does not compress: the upper bound is the fee of that size.
        if (i === 4) assert.ok(l1Gas * 100n < needed * 110n, `v${version} random: ${l1Gas} vs ${needed}`);
      }
    }
    await setOpL1Values(e2e.fx, CALM);
  });
});

describe('through an L1 fee spike and fall', () => {
  test("alto's preVerificationGas is signed at the fee of the moment; a spike-sized one is refused after the fall", async (t) => {
    let capped: Tenant | undefined;
    await throughSpikeAndFall(e2e, {
      calm: () => setOpL1Values(e2e.fx, CALM),
      spike: () => setOpL1Values(e2e.fx, SPIKE),
      diagnostic: (message) => t.diagnostic(message),
      // What a static figure does (PATRON_CHAINS[i].bounds.l1DataGasPerByte, here a dApp's own): set with twice the
      // calm op's needs, it refuses the spike's op; beside the oracle it is the ceiling.
      inSpike: async ({ calm, spike }) => {
        const handleOps = encodeFunctionData({
          abi: entryPoint07Abi,
          functionName: 'handleOps',
          args: [[toPackedUserOperation(toViemOperation(calm.op))], calm.op.sender],
        });
        // The op's own bytes: handleOps' calldata without its selector and four head words.
        const opBytes = BigInt(size(handleOps) - 132);
        const perByte = (2n * calm.op.preVerificationGas + opBytes - 1n) / opBytes;
        capped = await createTenant(e2e.ctx.deps);
        await e2e.ctx.deps.accounts.setDappLimits({
          dappId: capped.dappId,
          limits: { bounds: { l1DataGasPerByte: perByte.toString() } },
        });
        const refused = await paymasterData(e2e, spike.op, capped.apiKey);
        assert.equal(refused.answer.error?.code, -32040, JSON.stringify(refused.answer));
        assert.equal(refused.answer.error?.data?.rule, 'preVerificationGasForSize');
      },
      // The static figure set for calm times signs calm ops, as the oracle does.
      afterFall: async (after) => {
        assert.ok((await paymasterData(e2e, after.op, capped?.apiKey)).signed);
      },
    });
  });
});

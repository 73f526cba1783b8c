import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { privateKeyToAccount } from 'viem/accounts';
import { ARBITRUM_NODE_INTERFACE } from '../src/chain/readL1Fee.js';
import { verifyChains } from '../src/chain/verifyChains.js';
import { estimatedOp, type L1FeeE2e, paymasterData, startL1FeeE2e, throughSpikeAndFall } from './helpers/l1FeeE2e.js';
import { type ArbitrumL1Values, installNodeInterface, setArbitrumL1Values } from './helpers/l1FeeOracles.js';
import { KEYS } from './helpers/patronPaymasterV06.js';

/**
 * preVerificationGas bounds on an Arbitrum chain (docs/guides/signing-bounds.md, "L1 data on L2s"): NodeInterface's
 * gasEstimateL1Component answered at its address by a stand-in that prices as a Nitro node does (helpers/
 * l1FeeOracles.ts), and alto (--chain-type arbitrum) asking it for each op's L1 gas. Patron (`l1Fee: "arbitrum"`)
 * signs what alto asks through a ×10 L1 price spike, refuses a spike-sized preVerificationGas once the price is back,
 * and signs nothing while NodeInterface cannot be read.
 */
// 0.02 gwei per L1 calldata unit; Arbitrum's L2 base fee floor, 0.01 gwei. The ×10 spike prices an op's L1 data at
// ~500,000 L2 gas, still within the default maxPreVerificationGas (1,000,000).
const CALM: ArbitrumL1Values = { l1PricePerUnit: 20_000_000n, l2BaseFee: 10_000_000n };
const SPIKE: ArbitrumL1Values = { ...CALM, l1PricePerUnit: CALM.l1PricePerUnit * 10n };

let e2e: L1FeeE2e;
before(async () => {
  e2e = await startL1FeeE2e({ chainType: 'l1', l1Fee: 'arbitrum', setUp: (fx) => installNodeInterface(fx, CALM) });
});
after(() => e2e?.close());

const chain = () => {
  const c = e2e.ctx.deps.chains.list()[0];
  assert.ok(c);
  return c;
};

describe('through an L1 price spike and fall', () => {
  test("alto's preVerificationGas is signed at the price of the moment; a spike-sized one is refused after the fall", async (t) => {
    await throughSpikeAndFall(e2e, {
      calm: () => setArbitrumL1Values(e2e.fx, CALM),
      spike: () => setArbitrumL1Values(e2e.fx, SPIKE),
      diagnostic: (message) => t.diagnostic(message),
    });
  });
});

describe('when NodeInterface cannot be read', () => {
  test('nothing is signed (-32041, retried by clients), and signing resumes once it answers again', async () => {
    await setArbitrumL1Values(e2e.fx, CALM);
    const { op } = await estimatedOp(e2e);
    const code = await e2e.fx.client.getCode({ address: ARBITRUM_NODE_INTERFACE });
    assert.ok(code);
    // A node whose NodeInterface reverts (the code replaced by `revert(0, 0)`), on a new block.
    await e2e.fx.client.setCode({ address: ARBITRUM_NODE_INTERFACE, bytecode: '0x60006000fd' });
    await e2e.fx.client.request({ method: 'evm_mine', params: [] } as never);
    const refused = await paymasterData(e2e, op);
    assert.equal(refused.answer.status, 503, JSON.stringify(refused.answer));
    assert.equal(refused.answer.error?.code, -32041);
    await e2e.fx.client.setCode({ address: ARBITRUM_NODE_INTERFACE, bytecode: code });
    await e2e.fx.client.request({ method: 'evm_mine', params: [] } as never);
    const signed = await paymasterData(e2e, op);
    assert.ok(signed.signed, JSON.stringify(signed.answer));
  });
});

describe('the start-up check', () => {
  test('an l1Fee whose oracle does not answer on the chain refuses to start, naming it', async () => {
    const signer = privateKeyToAccount(KEYS.signer).address;
    assert.deepEqual(await verifyChains({ chains: [chain()], signer }), []);
    const problems = await verifyChains({ chains: [{ ...chain(), l1Fee: 'opStack' }], signer });
    assert.equal(problems.length, 1, JSON.stringify(problems));
    assert.ok(
      problems[0]?.message.startsWith(
        `chain ${e2e.fx.chain.chainId}: l1Fee is "opStack" but the OP stack's GasPriceOracle at 0x420000000000000000000000000000000000000F (an OP-stack chain since Ecotone?) could not be read (`,
      ),
      problems[0]?.message,
    );
    assert.equal(problems[0]?.unreachable, false);
  });
});

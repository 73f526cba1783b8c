import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { concat, encodeAbiParameters, type Hex, size } from 'viem';
import { SimulationFailedError } from '../src/errors/PatronError.js';
import {
  DUMMY_SIGNATURE,
  DUMMY_SIGNATURE_BYTES,
  estimateGasV06,
  preVerificationGasV06,
} from '../src/paymaster/entryPoints/v06/gasEstimatorV06.js';
import { encodeSponsoredPaymasterAndData } from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import {
  buildDeployingOp,
  fixtureChainRuntime,
  type PatronFixture,
  startPatronFixture,
} from './helpers/patronPaymasterV06.js';

/**
 * The estimator simulates the op with the signature its client sent (a smart account's own dummy, whatever its
 * length), on the in-process EntryPoint v0.6, and prices preVerificationGas on that signature's real length.
 */
let fx: PatronFixture;
before(async () => {
  fx = await startPatronFixture();
});
after(() => fx.close());

/** The op with a sponsored paymasterAndData of the final length (a dummy signature), as the service simulates it. */
async function sponsoredOp(salt: bigint, signature: Hex) {
  const op = await buildDeployingOp(fx, salt);
  const paymasterAndData = encodeSponsoredPaymasterAndData({
    paymaster: fx.paymaster,
    validUntil: 2 ** 40,
    validAfter: 0,
    signature: DUMMY_SIGNATURE_BYTES,
  });
  return { ...op, paymasterAndData, signature };
}

/** What Biconomy Smart Account v2 sends: abi.encode(bytes signature, address validationModule), 192 bytes. */
const smartAccountV2Signature: Hex = encodeAbiParameters(
  [{ type: 'bytes' }, { type: 'address' }],
  [DUMMY_SIGNATURE, '0x0000001c5b32F37F5beA87BDD5374eB2aC54eA8e'],
);

test('a 192-byte signature is simulated as sent: this SimpleAccount rejects it (AA23), proving it was not replaced', async () => {
  assert.equal(size(smartAccountV2Signature), 192);
  const op = await sponsoredOp(901n, smartAccountV2Signature);
  await assert.rejects(estimateGasV06({ chain: fixtureChainRuntime(fx), userOp: op }), (err: unknown) => {
    assert.ok(err instanceof SimulationFailedError, String(err));
    assert.match(err.reason, /^AA23/);
    return true;
  });
});

test('an empty signature gets the 65-byte ECDSA dummy, and a 65-byte one is kept: both simulate', async () => {
  const chain = fixtureChainRuntime(fx);
  const empty = await estimateGasV06({ chain, userOp: await sponsoredOp(902n, '0x') });
  const own = await estimateGasV06({
    chain,
    userOp: await sponsoredOp(902n, DUMMY_SIGNATURE),
  });
  assert.equal(empty.preVerificationGas, own.preVerificationGas);
  assert.ok(own.verificationGasLimit > 0n && own.callGasLimit > 0n);
});

test('preVerificationGas is priced on the signature as sent: 127 more non-zero bytes cost more', async () => {
  const op = await buildDeployingOp(fx, 903n);
  const short = preVerificationGasV06({ ...op, signature: DUMMY_SIGNATURE });
  const long = preVerificationGasV06({ ...op, signature: concat([DUMMY_SIGNATURE, `0x${'ab'.repeat(127)}`]) });
  // 127 more non-zero bytes at 16 gas each, less the 31 zero bytes (4 gas each) that padded the 65-byte one.
  assert.ok(long - short >= 127n * 16n - 31n * 4n, `${short} → ${long}`);
});

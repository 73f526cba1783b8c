import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { encodeErrorResult, getAddress, type Hex, parseEther, toFunctionSelector, zeroAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { loadAccountAbstractionArtifact } from '../src/chain/aaArtifacts.js';
import { type DevChain, startDevChain } from '../src/chain/embeddedChain.js';
import { SimulationFailedError, UnavailableError } from '../src/errors/PatronError.js';
import {
  entryPointSimulations,
  simulateHandleOpAbi,
  simulateHandleOpV07,
  simulationFailure,
} from '../src/paymaster/entryPoints/v07/simulateV07.js';
import type { UnpackedUserOperationV07 } from '../src/paymaster/entryPoints/v07/userOperationV07.js';
import { draftOp, fund, sign, simpleAccount } from './helpers/simpleAccountV07.js';

const deployerKey: Hex = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba';
const owner = privateKeyToAccount('0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6');

let dev: DevChain;
before(async () => {
  dev = await startDevChain({
    signerAddress: owner.address,
    ownerPrivateKey: deployerKey,
    depositWei: parseEther('1'),
  });
});
after(() => dev.close());

/** Generous limits at 1 wei, as the estimator simulates. */
function simulable(op: UnpackedUserOperationV07): UnpackedUserOperationV07 {
  return {
    ...op,
    callGasLimit: 200_000n,
    verificationGasLimit: 1_000_000n,
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 1n,
  };
}

async function failure(promise: Promise<unknown>): Promise<SimulationFailedError> {
  const err = await promise.then(
    () => assert.fail('expected the simulation to fail'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof SimulationFailedError, String(err));
  return err;
}

describe('simulateHandleOpV07', () => {
  it("its typed simulateHandleOp is every version's EntryPointSimulations function", () => {
    const typed = toFunctionSelector(simulateHandleOpAbi[0]);
    for (const version of ['0.7', '0.8', '0.9'] as const) {
      const item = entryPointSimulations(version).abi.find(
        (x) => x.type === 'function' && x.name === 'simulateHandleOp',
      );
      assert.ok(item !== undefined && item.type === 'function');
      assert.equal(toFunctionSelector(item), typed, `v${version}`);
    }
  });

  for (const version of ['0.7', '0.8'] as const) {
    it(`v${version}: returns the ExecutionResult of a signed op, and AA24 for a dummy signature`, async () => {
      const account = await simpleAccount(dev, owner, version, 1n);
      await fund(dev, account.address);
      const draft = simulable(await draftOp(account, [{ to: owner.address, value: 1n }]));
      const args = { request: dev.chain.request, entryPoint: dev.entryPoints[version], version };
      const result = await simulateHandleOpV07({ ...args, userOp: await sign(account, draft) });
      assert.equal(result.accountValidationData, 0n);
      assert.ok(result.preOpGas > 100_000n, 'validation deployed the account');
      assert.ok(result.paid > result.preOpGas);
      // simulateHandleOp returns a signature failure instead of reverting; it is a failure all the same.
      assert.equal((await failure(simulateHandleOpV07({ ...args, userOp: draft }))).reason, 'AA24 signature error');
      const tolerated = await simulateHandleOpV07({ ...args, userOp: draft, ignoreSignatureFailure: true });
      assert.equal(tolerated.accountValidationData, 1n);
    });
  }

  it("v0.9: names the EntryPoint's custom errors (PaymasterNotDeployed, Eip7702SenderWithoutCode)", async () => {
    const base: UnpackedUserOperationV07 = {
      sender: '0x00000000000000000000000000000000000000c1',
      nonce: 0n,
      callData: '0x',
      callGasLimit: 100_000n,
      verificationGasLimit: 100_000n,
      preVerificationGas: 50_000n,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
      signature: '0x',
    };
    const args = { request: dev.chain.request, entryPoint: dev.entryPoints['0.9'], version: '0.9' as const };
    // A sender with code (any contract), so the simulation-only checks get to the paymaster.
    const deployed = { ...base, sender: dev.simpleAccountFactories['0.7'] };
    const noPaymaster = await failure(
      simulateHandleOpV07({ ...args, userOp: { ...deployed, paymaster: zeroAddress } }),
    );
    assert.equal(noPaymaster.reason, `PaymasterNotDeployed(paymaster=${zeroAddress})`);
    const eoa = await failure(simulateHandleOpV07({ ...args, userOp: { ...base, factory: '0x7702' } }));
    assert.equal(eoa.reason, `Eip7702SenderWithoutCode(sender=${getAddress(base.sender)})`);
  });

  it('names FailedOpWithRevert with its inner reason, and an unknown error by its selector', () => {
    const { abi } = entryPointSimulations('0.8');
    const inner = encodeErrorResult({
      abi: [{ type: 'error', name: 'Error', inputs: [{ type: 'string', name: 'message' }] }],
      errorName: 'Error',
      args: ['no way'],
    });
    const withRevert = encodeErrorResult({ abi, errorName: 'FailedOpWithRevert', args: [0n, 'AA23 reverted', inner] });
    assert.equal(simulationFailure(abi, withRevert).reason, 'AA23 reverted: no way');
    const custom = encodeErrorResult({
      abi,
      errorName: 'FailedOpWithRevert',
      args: [0n, 'AA23 reverted', '0xabcdef0100'],
    });
    assert.match(simulationFailure(abi, custom).reason, /^AA23 reverted: .*unknown error 0xabcdef01/);
    assert.match(simulationFailure(abi, '0x12345678aa').message, /unknown error 0x12345678/);
    const failedOp = encodeErrorResult({ abi, errorName: 'FailedOp', args: [0n, 'AA31 paymaster deposit too low'] });
    assert.equal(simulationFailure(abi, failedOp).reason, 'AA31 paymaster deposit too low');
  });

  it('throws UnavailableError when the chain cannot be reached', async () => {
    const down = async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8545'), { code: 'ECONNREFUSED' });
    };
    const err = await simulateHandleOpV07({
      request: down,
      entryPoint: dev.entryPoints['0.7'],
      version: '0.7',
      userOp: simulable({
        sender: owner.address,
        nonce: 0n,
        callData: '0x',
        callGasLimit: 0n,
        verificationGasLimit: 0n,
        preVerificationGas: 0n,
        maxFeePerGas: 0n,
        maxPriorityFeePerGas: 0n,
        signature: '0x',
      }),
    }).catch((e: unknown) => e);
    assert.ok(err instanceof UnavailableError, String(err));
  });

  it('reads the simulation artifacts of the installed packages', () => {
    for (const version of ['0.7', '0.8', '0.9'] as const) {
      const artifact = loadAccountAbstractionArtifact(version, 'EntryPointSimulations');
      assert.equal(artifact.deployedBytecode, entryPointSimulations(version).deployedBytecode);
    }
    assert.throws(() => loadAccountAbstractionArtifact('0.7', '../package'), /not a contract name/);
  });
});

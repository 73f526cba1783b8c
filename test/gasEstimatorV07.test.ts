import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Address, encodeFunctionData, getAddress, type Hex, parseAbi, parseEther, parseEventLogs } from 'viem';
import {
  entryPoint08Abi,
  entryPoint09Abi,
  getUserOperationHash,
  toSimple7702SmartAccount,
} from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { loadAccountAbstractionArtifact } from '../src/chain/aaArtifacts.js';
import { waitForSuccess } from '../src/chain/devClient.js';
import { type DevChain, startDevChain } from '../src/chain/embeddedChain.js';
import type { EntryPointV07Version } from '../src/chain/entryPoints.js';
import { SimulationFailedError } from '../src/errors/PatronError.js';
import { estimateGasV07 } from '../src/paymaster/entryPoints/v07/gasEstimatorV07.js';
import { preVerificationGasV07 } from '../src/paymaster/entryPoints/v07/preVerificationGasV07.js';
import {
  packUserOperationV07,
  type UnpackedUserOperationV07,
} from '../src/paymaster/entryPoints/v07/userOperationV07.js';
import { deployPostOpPaymaster } from './helpers/postOpPaymaster.js';
import {
  draftOp,
  fund,
  handleOp,
  type SimpleVersion,
  sdkClientOf,
  sign,
  simpleAccount,
  toViemOperation,
} from './helpers/simpleAccountV07.js';

const deployerKey: Hex = '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba';
const owner = privateKeyToAccount('0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6');
const recipient: Address = '0x00000000000000000000000000000000000000b0';
/** Runtime code that reverts with the 4 bytes 0xdeadbeef (an unknown custom error). */
const REVERTER: Address = '0x00000000000000000000000000000000000000aa';

let dev: DevChain;
const paymasters: Partial<Record<SimpleVersion, Address>> = {};
let nextIndex = 100n;

before(async () => {
  dev = await startDevChain({
    signerAddress: owner.address,
    ownerPrivateKey: deployerKey,
    depositWei: parseEther('1'),
  });
  await dev.client.setCode({ address: REVERTER, bytecode: '0x63deadbeef6000526004601cfd' });
  for (const version of ['0.7', '0.8'] as const) {
    // Two fresh slots in postOp (~45k gas) under a 150k limit: >40k unused, so v0.8's postOp penalty applies.
    paymasters[version] = await deployPostOpPaymaster(dev.client, {
      entryPoint: dev.entryPoints[version],
      postOpWrites: 2n,
      deposit: parseEther('1'),
    });
  }
});
after(() => dev.close());

function estimate(version: EntryPointV07Version, userOp: UnpackedUserOperationV07) {
  return estimateGasV07({ request: dev.chain.request, entryPoint: dev.entryPoints[version], version, userOp });
}

/** The error an estimate throws, asserted to be a SimulationFailedError. */
async function failure(promise: Promise<unknown>): Promise<SimulationFailedError> {
  const err = await promise.then(
    () => assert.fail('expected the estimate to fail'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof SimulationFailedError, String(err));
  return err;
}

function withPaymaster(
  version: SimpleVersion,
  op: UnpackedUserOperationV07,
  data: Hex = '0x00',
): UnpackedUserOperationV07 {
  const paymaster = paymasters[version];
  assert.ok(paymaster);
  return {
    ...op,
    paymaster,
    paymasterVerificationGasLimit: 60_000n,
    paymasterPostOpGasLimit: 150_000n,
    paymasterData: data,
  };
}

describe('estimateGasV07 against the real EntryPoints', () => {
  for (const version of ['0.7', '0.8'] as const) {
    for (const paid of ['the account', 'a paymaster with postOp'] as const) {
      it(`v${version}, ${paid}: the estimate executes an op that deploys its account and makes a call`, async () => {
        const account = await simpleAccount(dev, owner, version, nextIndex++);
        if (paid === 'the account') await fund(dev, account.address);
        const draft = await draftOp(account, [
          { to: recipient, value: 0n, data: '0x' },
          { to: recipient, value: 0n },
        ]);
        const op = paid === 'the account' ? draft : withPaymaster(version, draft);
        const limits = await estimate(version, op);
        const executed = await handleOp(dev, version, await sign(account, { ...op, ...limits }));
        assert.equal(executed.success, true);
        const code = await dev.client.getCode({ address: account.address });
        assert.ok(code !== undefined && code.length > 2, 'deployed');
        // The estimate is close to what was charged: the penalty correction left no large error either way.
        const error = Number(executed.actualGasUsed - limits.gasUsed) / Number(executed.actualGasUsed);
        assert.ok(Math.abs(error) < 0.02, `charged ${executed.actualGasUsed}, estimated ${limits.gasUsed}`);
      });
    }
  }

  it('v0.9 (rc.1 at the canonical address): the estimate executes a deployment and a call', async () => {
    const entryPoint = dev.entryPoints['0.9'];
    const { abi, bytecode } = loadAccountAbstractionArtifact('0.9', 'SimpleAccountFactory');
    const deployed = await waitForSuccess(
      dev.client,
      await dev.client.deployContract({ abi, bytecode, args: [entryPoint] }),
      'factory',
    );
    assert.ok(deployed.contractAddress);
    const factory = getAddress(deployed.contractAddress);
    const factoryAbi = parseAbi([
      'function getAddress(address owner, uint256 salt) view returns (address)',
      'function createAccount(address owner, uint256 salt) returns (address)',
    ]);
    const sender = await dev.client.readContract({
      address: factory,
      abi: factoryAbi,
      functionName: 'getAddress',
      args: [owner.address, 1n],
    });
    await fund(dev, sender);
    const draft: UnpackedUserOperationV07 = {
      sender,
      nonce: 0n,
      factory,
      factoryData: encodeFunctionData({ abi: factoryAbi, functionName: 'createAccount', args: [owner.address, 1n] }),
      callData: encodeFunctionData({
        abi: parseAbi(['function execute(address dest, uint256 value, bytes func)']),
        functionName: 'execute',
        args: [recipient, 9n, '0x'],
      }),
      callGasLimit: 0n,
      verificationGasLimit: 0n,
      preVerificationGas: 0n,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      signature: '0x',
    };
    const final = { ...draft, ...(await estimate('0.9', draft)) };
    const chainId = await dev.client.getChainId();
    const userOpHash = getUserOperationHash({
      chainId,
      entryPointAddress: entryPoint,
      entryPointVersion: '0.9',
      userOperation: toViemOperation(final),
    });
    const signature = await owner.sign({ hash: userOpHash });
    const hash = await dev.client.writeContract({
      address: entryPoint,
      abi: entryPoint09Abi,
      functionName: 'handleOps',
      args: [[packUserOperationV07({ ...final, signature })], dev.client.account.address],
      gas: 3_000_000n,
    });
    const receipt = await waitForSuccess(dev.client, hash, 'handleOps v0.9');
    const [event] = parseEventLogs({ abi: entryPoint09Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
    assert.equal(event?.args.success, true);
  });

  it('v0.8, EIP-7702: an undelegated EOA estimated with eip7702Auth (+25,000 preVerificationGas) executes', async () => {
    const eoa = privateKeyToAccount(generatePrivateKey());
    await fund(dev, eoa.address);
    const implementation = dev.simple7702Accounts['0.8'];
    const account = await toSimple7702SmartAccount({ client: sdkClientOf(dev), owner: eoa, implementation });
    const draft: UnpackedUserOperationV07 = {
      sender: eoa.address,
      nonce: await account.getNonce(),
      factory: '0x7702',
      callData: await account.encodeCalls([{ to: recipient, value: 5n }]),
      callGasLimit: 0n,
      verificationGasLimit: 0n,
      preVerificationGas: 0n,
      maxFeePerGas: 3_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      signature: await account.getStubSignature(),
      eip7702Auth: { address: implementation },
    };
    assert.equal(await dev.client.getCode({ address: eoa.address }), undefined, 'not delegated before its op');
    const limits = await estimate('0.8', draft);
    const { eip7702Auth: _, ...withoutAuth } = draft;
    assert.equal(limits.preVerificationGas - preVerificationGasV07(withoutAuth), 25_000n);
    const authorization = await dev.client.signAuthorization({ account: eoa, contractAddress: implementation });
    const final = { ...draft, ...limits };
    const signature = await account.signUserOperation({ ...toViemOperation(final), authorization });
    const hash = await dev.client.writeContract({
      address: dev.entryPoints['0.8'],
      abi: entryPoint08Abi,
      functionName: 'handleOps',
      args: [[packUserOperationV07({ ...final, signature })], dev.client.account.address],
      authorizationList: [authorization],
      gas: 3_000_000n,
    });
    const receipt = await waitForSuccess(dev.client, hash, 'handleOps with an authorization');
    const [event] = parseEventLogs({ abi: entryPoint08Abi, logs: receipt.logs, eventName: 'UserOperationEvent' });
    assert.equal(event?.args.success, true);
  });

  it('the call limit is the real execution gas plus the margin, not the simulation penalty', async () => {
    const account = await simpleAccount(dev, owner, '0.8', nextIndex++);
    await fund(dev, account.address);
    const limits = await estimate('0.8', await draftOp(account, [{ to: recipient, value: 1n }]));
    // A SimpleAccount execute of a 1-wei transfer costs ~40k; a limit from the uncorrected difference would
    // carry ~1M of the simulation's 10M callGasLimit penalty.
    assert.ok(limits.callGasLimit < 100_000n, `callGasLimit ${limits.callGasLimit}`);
  });

  it('names a reverting call with its revert data', async () => {
    const account = await simpleAccount(dev, owner, '0.7', nextIndex++);
    await fund(dev, account.address);
    const err = await failure(estimate('0.7', await draftOp(account, [{ to: REVERTER, data: '0x12' }])));
    assert.match(err.reason, /execution reverted: .*0xdeadbeef/);
  });

  it('names AA codes: AA21 (no funds), AA25 (nonce), AA33 with the paymaster revert reason', async () => {
    const account = await simpleAccount(dev, owner, '0.8', nextIndex++);
    const draft = await draftOp(account, [{ to: recipient }]);
    assert.match((await failure(estimate('0.8', draft))).reason, /^AA21 /);
    await fund(dev, account.address);
    assert.match((await failure(estimate('0.8', { ...draft, nonce: 7n }))).reason, /^AA25 /);
    const refused = withPaymaster('0.8', draft, '0xff');
    assert.equal((await failure(estimate('0.8', refused))).reason, 'AA33 reverted: test paymaster refuses');
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bytesToHex, concat, type Hex, hexToBytes, isAddressEqual, maxUint256, zeroHash } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { loadPatronPaymasterArtifact, patronPaymasterAbi } from '../src/chain/artifacts.js';
import { deployPatronPaymaster } from '../src/chain/embeddedChain.js';
import { viemKeccak } from '../src/paymaster/entryPoints/abiWords.js';
import {
  decodePaymasterAndData,
  encodeSponsoredPaymasterAndData,
  sponsoredHashV06,
  type UserOperationV06,
} from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import {
  buildDeployingOp,
  COUNTER_ADDRESS,
  executeCallData,
  failedOpReason,
  KEYS,
  latestTimestamp,
  revertOf,
  signAccount,
  signPaymaster,
  submitHandleOps,
} from './helpers/patronPaymasterV06.js';
import { usePatronChain } from './helpers/usePatronChain.js';

const AA34 = 'AA34 signature error';
const AA32 = 'AA32 paymaster expired or not due';
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

describe('PatronPaymaster (EntryPoint v0.6, sponsored mode)', () => {
  const chain = usePatronChain();

  /** A fully signed op; `mutate` runs after the paymaster signed and before the account signs. */
  async function sponsoredOp(mutate: (op: UserOperationV06) => UserOperationV06 = (op) => op) {
    const signed = await signPaymaster(chain.fx, await buildDeployingOp(chain.fx), chain.window);
    return signAccount(chain.fx, mutate(signed));
  }

  /** Replaces the paymaster signature bytes, keeping the rest of the signed data. */
  function withPaymasterSignature(op: UserOperationV06, signature: Uint8Array): UserOperationV06 {
    const data = decodePaymasterAndData(op.paymasterAndData);
    return { ...op, paymasterAndData: encodeSponsoredPaymasterAndData({ ...data, signature }) };
  }

  it('has the typed ABI of src/chain/artifacts.ts (no drift from the compiled contract)', () => {
    // solc adds `internalType`, `anonymous: false` and `name: ''` for unnamed parameters; parseAbi leaves them out.
    const omitted = (key: string, value: unknown) =>
      key === 'internalType' ||
      ((key === 'anonymous' || key === 'indexed') && value === false) ||
      (key === 'name' && value === '');
    const normalize = (abi: readonly unknown[]) =>
      abi
        .map((item) => JSON.stringify(item, (key, value: unknown) => (omitted(key, value) ? undefined : value)))
        .map((json) => JSON.parse(json) as { type: string; name?: string })
        .toSorted((a, b) => `${a.type} ${a.name ?? ''}`.localeCompare(`${b.type} ${b.name ?? ''}`));
    assert.deepEqual(normalize(patronPaymasterAbi), normalize(loadPatronPaymasterArtifact().abi));
  });

  it('sponsors a SimpleAccount deployment + call: success, our paymaster, deposit drops by actualGasCost', async (t) => {
    const op = await sponsoredOp();
    const readDeposit = () =>
      chain.fx.client.readContract({
        address: chain.fx.paymaster,
        abi: patronPaymasterAbi,
        functionName: 'getDeposit',
      });
    const depositBefore = await readDeposit();
    const { receipt, events } = await submitHandleOps(chain.fx, [op], { gas: 3_000_000n });
    assert.equal(receipt.status, 'success');
    const [event, ...more] = events;
    assert.ok(event !== undefined && more.length === 0, 'exactly one UserOperationEvent');
    assert.equal(event.args.success, true);
    assert.ok(isAddressEqual(event.args.paymaster, chain.fx.paymaster));
    assert.ok(isAddressEqual(event.args.sender, op.sender));
    assert.equal(await readDeposit(), depositBefore - event.args.actualGasCost);
    assert.equal(
      await chain.fx.client.getStorageAt({ address: COUNTER_ADDRESS, slot: zeroHash }),
      `0x${'0'.repeat(63)}1`,
    );
    assert.notEqual(await chain.fx.client.getCode({ address: op.sender }), undefined);
    t.diagnostic(`tx gasUsed ${receipt.gasUsed}, actualGasUsed ${event.args.actualGasUsed}`);
  });

  it('computes the same hash as getSponsoredHash for deploying, plain and extreme ops', async () => {
    const base = await buildDeployingOp(chain.fx);
    const ops: UserOperationV06[] = [
      base,
      { ...base, initCode: '0x', callData: '0x' },
      {
        ...base,
        nonce: maxUint256,
        callGasLimit: maxUint256,
        maxFeePerGas: maxUint256,
        callData: `0x${'ff'.repeat(999)}`,
      },
    ];
    for (const [i, userOp] of ops.entries()) {
      for (const [validUntil, validAfter] of [
        [0, 0],
        [2 ** 48 - 1, 1_700_000_000],
      ] as const) {
        const onChain = await chain.fx.client.readContract({
          address: chain.fx.paymaster,
          abi: patronPaymasterAbi,
          functionName: 'getSponsoredHash',
          args: [userOp, validUntil, validAfter],
        });
        const local = sponsoredHashV06(
          { userOp, chainId: 31337n, paymaster: chain.fx.paymaster, validUntil, validAfter },
          viemKeccak,
        );
        assert.equal(bytesToHex(local), onChain, `op ${i}, window ${validUntil}/${validAfter}`);
      }
    }
  });

  it('packs validationData as sigFailed | validUntil << 160 | validAfter << 208 with an empty context', async () => {
    const op = await sponsoredOp();
    const badOp = withPaymasterSignature(op, new Uint8Array(65));
    const validate = async (userOp: UserOperationV06) =>
      (
        await chain.fx.client.simulateContract({
          address: chain.fx.paymaster,
          abi: patronPaymasterAbi,
          functionName: 'validatePaymasterUserOp',
          args: [userOp, zeroHash, 0n],
          account: chain.fx.entryPoint,
        })
      ).result;
    const expected = (BigInt(chain.window.validUntil) << 160n) | (BigInt(chain.window.validAfter) << 208n);
    assert.deepEqual(await validate(op), ['0x', expected]);
    assert.deepEqual(await validate(badOp), ['0x', expected | 1n]);
  });

  it('passes simulation untampered (the baseline of every negative case below)', async () => {
    assert.equal(await failedOpReason(chain.fx, await sponsoredOp()), 'ok');
  });

  const tampers: Array<[string, (op: UserOperationV06) => UserOperationV06]> = [
    ['callGasLimit', (op) => ({ ...op, callGasLimit: op.callGasLimit + 1n })],
    ['verificationGasLimit', (op) => ({ ...op, verificationGasLimit: op.verificationGasLimit + 1n })],
    ['preVerificationGas', (op) => ({ ...op, preVerificationGas: op.preVerificationGas + 1n })],
    ['maxFeePerGas', (op) => ({ ...op, maxFeePerGas: op.maxFeePerGas + 1n })],
    ['maxPriorityFeePerGas', (op) => ({ ...op, maxPriorityFeePerGas: op.maxPriorityFeePerGas - 1n })],
    // Nonce key 1, sequence 0: still a nonce the EntryPoint accepts, so only the paymaster can object.
    ['nonce', (op) => ({ ...op, nonce: 1n << 64n })],
    ['callData', (op) => ({ ...op, callData: executeCallData('0x01') })],
    // A trailing byte after the ABI-encoded createAccount call still deploys the same sender.
    ['initCode', (op) => ({ ...op, initCode: concat([op.initCode, '0x00']) })],
    ['validUntil', (op) => retime(op, { validUntil: decodePaymasterAndData(op.paymasterAndData).validUntil + 1 })],
    ['validAfter', (op) => retime(op, { validAfter: decodePaymasterAndData(op.paymasterAndData).validAfter + 1 })],
  ];
  function retime(op: UserOperationV06, change: { validUntil?: number; validAfter?: number }): UserOperationV06 {
    const data = decodePaymasterAndData(op.paymasterAndData);
    return { ...op, paymasterAndData: encodeSponsoredPaymasterAndData({ ...data, ...change }) };
  }
  for (const [field, mutate] of tampers) {
    it(`rejects ${field} changed after the paymaster signed with ${AA34}`, async () => {
      assert.equal(await failedOpReason(chain.fx, await sponsoredOp(mutate)), AA34);
    });
  }

  it(`rejects an expired window (validUntil in the past) with ${AA32}`, async () => {
    const now = await latestTimestamp(chain.fx);
    chain.window = { validUntil: now - 60, validAfter: 0 };
    assert.equal(await failedOpReason(chain.fx, await sponsoredOp()), AA32);
  });

  it(`rejects a window not yet due (validAfter in the future) with ${AA32}`, async () => {
    const now = await latestTimestamp(chain.fx);
    chain.window = { validUntil: now + 7200, validAfter: now + 3600 };
    assert.equal(await failedOpReason(chain.fx, await sponsoredOp()), AA32);
  });

  it('rejects a signature made for another chain id with AA34', async () => {
    const op = await signPaymaster(chain.fx, await buildDeployingOp(chain.fx), { ...chain.window, signedChainId: 1n });
    assert.equal(await failedOpReason(chain.fx, await signAccount(chain.fx, op)), AA34);
  });

  it('rejects a signature made for another PatronPaymaster (same signer) with AA34', async () => {
    const other = await deployPatronPaymaster({
      client: chain.fx.client,
      entryPoint: chain.fx.entryPoint,
      owner: chain.fx.client.account.address,
      verifyingSigner: privateKeyToAccount(KEYS.signer).address,
    });
    assert.ok(!isAddressEqual(other, chain.fx.paymaster));
    const op = await signPaymaster(chain.fx, await buildDeployingOp(chain.fx), {
      ...chain.window,
      signedPaymaster: other,
    });
    assert.equal(await failedOpReason(chain.fx, await signAccount(chain.fx, op)), AA34);
  });

  it('rejects a signature by another key with AA34', async () => {
    const op = await signPaymaster(chain.fx, await buildDeployingOp(chain.fx), { ...chain.window, key: KEYS.stranger });
    assert.equal(await failedOpReason(chain.fx, await signAccount(chain.fx, op)), AA34);
  });

  const malformed: Array<[string, (sig: Uint8Array) => Uint8Array]> = [
    ['all zero', () => new Uint8Array(65)],
    ['v = 29', (sig) => Uint8Array.from(sig, (b, i) => (i === 64 ? 29 : b))],
    [
      'high s (the malleable twin of a valid signature)',
      (sig) => {
        const s = SECP256K1_N - BigInt(bytesToHex(sig.subarray(32, 64)));
        const twin = Uint8Array.from(sig);
        twin.set(hexToBytes(`0x${s.toString(16).padStart(64, '0')}`), 32);
        twin[64] = sig[64] === 27 ? 28 : 27;
        return twin;
      },
    ],
  ];
  for (const [label, corrupt] of malformed) {
    it(`treats a malformed 65-byte signature (${label}) as a failed signature: AA34, not a revert`, async () => {
      const op = await sponsoredOp((signed) => {
        const { signature } = decodePaymasterAndData(signed.paymasterAndData);
        return withPaymasterSignature(signed, corrupt(signature));
      });
      assert.equal(await failedOpReason(chain.fx, op), AA34);
    });
  }

  /** Replaces paymasterAndData with raw bytes, then asks the paymaster directly as the EntryPoint would. */
  async function rejectBoth(op: UserOperationV06, expectedError: string, expectedArgs: readonly unknown[]) {
    const signed = await signAccount(chain.fx, op);
    assert.match(await failedOpReason(chain.fx, signed), /^AA33 reverted/);
    const err = await chain.fx.client
      .simulateContract({
        address: chain.fx.paymaster,
        abi: patronPaymasterAbi,
        functionName: 'validatePaymasterUserOp',
        args: [signed, zeroHash, 0n],
        account: chain.fx.entryPoint,
      })
      .then(() => undefined, revertOf);
    assert.deepEqual(err, { errorName: expectedError, args: expectedArgs });
  }

  it('reverts on an unknown mode byte (AA33 via the EntryPoint, UnknownMode directly)', async () => {
    const op = await signPaymaster(chain.fx, await buildDeployingOp(chain.fx), chain.window);
    const bytes = hexToBytes(op.paymasterAndData);
    bytes[20] = 3;
    await rejectBoth({ ...op, paymasterAndData: bytesToHex(bytes) }, 'UnknownMode', [3]);
  });

  for (const length of [20, 97, 99]) {
    it(`reverts on a ${length}-byte sponsored paymasterAndData (AA33, InvalidPaymasterDataLength)`, async () => {
      const op = await signPaymaster(chain.fx, await buildDeployingOp(chain.fx), chain.window);
      const padded = `${op.paymasterAndData}00` as Hex;
      const paymasterAndData = padded.slice(0, 2 + 2 * length) as Hex;
      await rejectBoth({ ...op, paymasterAndData }, 'InvalidPaymasterDataLength', [BigInt(length), 98n]);
    });
  }

  it('lets only the EntryPoint call validatePaymasterUserOp and postOp', async () => {
    const op = await sponsoredOp();
    const caller = chain.fx.stranger.account.address;
    const asStranger = { address: chain.fx.paymaster, abi: patronPaymasterAbi, account: caller } as const;
    // Both outcomes are handled as soon as the calls start: a rejection left unobserved while the other call
    // is awaited would count as unhandled.
    const outcomes = await Promise.all([
      chain.fx.client
        .simulateContract({ ...asStranger, functionName: 'validatePaymasterUserOp', args: [op, zeroHash, 0n] })
        .then(() => undefined, revertOf),
      chain.fx.client
        .simulateContract({ ...asStranger, functionName: 'postOp', args: [0, '0x', 0n] })
        .then(() => undefined, revertOf),
    ]);
    for (const outcome of outcomes) assert.deepEqual(outcome, { errorName: 'NotEntryPoint', args: [caller] });
  });
});

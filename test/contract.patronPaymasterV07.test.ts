import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type Address,
  bytesToHex,
  concat,
  type Hex,
  hexToBytes,
  isAddressEqual,
  keccak256,
  maxUint256,
  parseEventLogs,
  size,
  slice,
  zeroAddress,
  zeroHash,
} from 'viem';
import { entryPoint09Abi } from 'viem/account-abstraction';
import { privateKeyToAccount, sign } from 'viem/accounts';
import { loadAccountAbstractionArtifact } from '../src/chain/aaArtifacts.js';
import {
  deployPatronPaymasterV07,
  loadPatronPaymasterV07Artifact,
  patronPaymasterV07Abi,
} from '../src/chain/deployPatronPaymasterV07.js';
import { waitForSuccess } from '../src/chain/devClient.js';
import { viemKeccak } from '../src/paymaster/entryPoints/abiWords.js';
import { worstCaseCostV07 } from '../src/paymaster/entryPoints/v07/chargesV07.js';
import { sponsoredHashV07, userOpHashV08 } from '../src/paymaster/entryPoints/v07/hashesV07.js';
import {
  BLOCK_RANGE_FLAG,
  DUMMY_PAYMASTER_SIGNATURE,
  decodePaymasterAndDataV07,
  encodePaymasterAndDataV07,
  exactCapsV07,
  type GasCapsV07,
  PAYMASTER_SIG_MAGIC,
} from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { KEYS, revertOf, testKey } from './helpers/patronPaymasterV06.js';
import {
  AA32,
  AA33,
  AA34,
  accountAddress,
  buildDeployingOp,
  counterValue,
  createAccountInitCode,
  entryPointNonce,
  executeCallData,
  failedOpReason,
  handleOne,
  latestTimestamp,
  type OpV07,
  type PaymasterSigning,
  packed,
  paymasterDeposit,
  signAccount,
  signedGasOf,
  signPaymaster,
  simulateOp,
  userOpHashOf,
  useV07Chain,
  type V07Fixture,
  VERSIONS,
  validateAsEntryPoint,
} from './helpers/patronPaymasterV07.js';

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const FLAG = BLOCK_RANGE_FLAG;
const MAX_UINT64 = (1n << 64n) - 1n;

it('PatronPaymasterV07 has the typed ABI of src/chain/deployPatronPaymasterV07.ts (no drift)', () => {
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
  assert.deepEqual(normalize(patronPaymasterV07Abi), normalize(loadPatronPaymasterV07Artifact().abi));
});

for (const version of VERSIONS) {
  describe(`PatronPaymasterV07 on EntryPoint v${version} (sponsored mode)`, () => {
    const chain = useV07Chain(version);

    /** A deploying op signed by the paymaster (then `mutate`d) and by the account. */
    async function sponsoredOp(mutate: (op: OpV07) => OpV07 = (op) => op, signing: Partial<PaymasterSigning> = {}) {
      const signed = await signPaymaster(chain.fx, await buildDeployingOp(chain.fx), { ...chain.window, ...signing });
      return signAccount(chain.fx, mutate(signed));
    }

    /** Re-encodes paymasterAndData with a change, keeping the signature. */
    function repack(op: OpV07, change: Partial<ReturnType<typeof decodePaymasterAndDataV07>>): OpV07 {
      const data = { ...decodePaymasterAndDataV07(op.paymasterAndData), ...change };
      return { ...op, paymasterAndData: encodePaymasterAndDataV07(data) };
    }

    it('knows its EntryPoint and version', async () => {
      const read = <F extends 'entryPoint' | 'entryPointVersion'>(functionName: F) =>
        chain.fx.client.readContract({ address: chain.fx.paymaster, abi: patronPaymasterV07Abi, functionName });
      assert.ok(isAddressEqual(await read('entryPoint'), chain.fx.entryPoint));
      assert.equal(await read('entryPointVersion'), Number(version.slice(2)));
    });

    it('sponsors a SimpleAccount deployment + call: success, our paymaster, deposit drops by actualGasCost', async (t) => {
      const op = await sponsoredOp();
      const onChainHash = await chain.fx.client.readContract({
        address: chain.fx.entryPoint,
        abi: entryPoint09Abi,
        functionName: 'getUserOpHash',
        args: [packed(op)],
      });
      assert.equal(userOpHashOf(chain.fx, op), onChainHash, 'local userOpHash = EntryPoint.getUserOpHash');
      const depositBefore = await paymasterDeposit(chain.fx);
      const { receipt, event } = await handleOne(chain.fx, op);
      assert.equal(event.args.success, true);
      assert.ok(isAddressEqual(event.args.paymaster, chain.fx.paymaster));
      assert.ok(isAddressEqual(event.args.sender, op.sender));
      assert.equal(event.args.userOpHash, onChainHash);
      assert.equal(await paymasterDeposit(chain.fx), depositBefore - event.args.actualGasCost);
      assert.equal(await counterValue(chain.fx), 1n);
      assert.notEqual(await chain.fx.client.getCode({ address: op.sender }), undefined);
      t.diagnostic(`v${version}: tx gasUsed ${receipt.gasUsed}, op actualGasUsed ${event.args.actualGasUsed}`);
    });

    it('computes the same digest as getSponsoredHash for deploying, plain, 7702-form and extreme ops and caps', async () => {
      const base = await buildDeployingOp(chain.fx);
      const maxUint128 = (1n << 128n) - 1n;
      // Without initCode the digest binds the sender's EXTCODEHASH: 0 for an account that does not exist, keccak256 of
      // the code for a contract, of 0xef0100 ‖ delegate for an EIP-7702 account.
      const delegated = testKey('digest-delegated-eoa').slice(0, 42) as Address;
      await chain.fx.client.setCode({ address: delegated, bytecode: concat(['0xef0100', chain.fx.paymaster]) });
      const codeHashes = new Map<Address, Hex>([
        [base.sender, zeroHash],
        [chain.fx.paymaster, keccak256((await chain.fx.client.getCode({ address: chain.fx.paymaster })) ?? '0x')],
        [delegated, keccak256(concat(['0xef0100', chain.fx.paymaster]))],
      ]);
      const ops: OpV07[] = [
        base,
        { ...base, initCode: '0x', callData: '0x' },
        { ...base, sender: chain.fx.paymaster, initCode: '0x' },
        { ...base, sender: delegated, initCode: '0x' },
        // The sender has no delegation, so the contract substitutes delegate 0 (the EntryPoint would refuse it).
        { ...base, initCode: '0x7702' },
        { ...base, initCode: concat(['0x7702000000000000000000000000000000000000', '0xabcdef']) },
        {
          ...base,
          nonce: maxUint256,
          callGasLimit: maxUint128,
          maxFeePerGas: maxUint128,
          paymasterPostOpGasLimit: maxUint128,
          preVerificationGas: maxUint256,
          callData: `0x${'ff'.repeat(999)}`,
        },
      ];
      const capsCases: GasCapsV07[] = [
        { maxVerificationGasLimit: 400_000n, maxCallGasLimit: 100_000n, maxPreVerificationGas: 60_000n },
        { maxVerificationGasLimit: 0n, maxCallGasLimit: 0n, maxPreVerificationGas: 0n },
        { maxVerificationGasLimit: MAX_UINT64, maxCallGasLimit: 1n, maxPreVerificationGas: MAX_UINT64 - 1n },
      ];
      for (const [i, op] of ops.entries()) {
        // The contract reads the gas limits from paymasterAndData[20:52]; the rest of it is not hashed.
        const withLimits = await signPaymaster(chain.fx, op, {
          validUntil: 0,
          validAfter: 0,
          caps: { maxVerificationGasLimit: 0n, maxCallGasLimit: 0n, maxPreVerificationGas: 0n },
          eip7702Delegate: zeroAddress,
          senderCodeHash: zeroHash,
        });
        const senderCodeHash = codeHashes.get(op.sender);
        for (const [validUntil, validAfter] of [
          [0, 0],
          [2 ** 48 - 1, 1_700_000_000],
        ] as const) {
          for (const caps of capsCases) {
            const onChain = await chain.fx.client.readContract({
              address: chain.fx.paymaster,
              abi: patronPaymasterV07Abi,
              functionName: 'getSponsoredHash',
              args: [
                packed(withLimits),
                validUntil,
                validAfter,
                caps.maxVerificationGasLimit,
                caps.maxCallGasLimit,
                caps.maxPreVerificationGas,
              ],
            });
            const local = sponsoredHashV07(
              {
                userOp: op,
                chainId: BigInt(chain.fx.chainId),
                paymaster: chain.fx.paymaster,
                entryPoint: chain.fx.entryPoint,
                validUntil,
                validAfter,
                caps,
                eip7702Delegate: zeroAddress,
                ...(op.initCode === '0x' && senderCodeHash !== undefined ? { senderCodeHash } : {}),
              },
              viemKeccak,
            );
            const label = `op ${i}, window ${validUntil}/${validAfter}, caps ${caps.maxVerificationGasLimit}`;
            assert.equal(bytesToHex(local), onChain, label);
          }
        }
      }
    });

    it('returns sigFailed | validUntil << 160 | validAfter << 208 with an empty context', async () => {
      const op = await sponsoredOp();
      const { validUntil, validAfter } = chain.window;
      const expected = (BigInt(validUntil) << 160n) | (BigInt(validAfter) << 208n);
      assert.deepEqual(await validateAsEntryPoint(chain.fx, op), { ok: true, context: '0x', validationData: expected });
      const bad = repack(op, { signature: new Uint8Array(65) });
      assert.deepEqual(await validateAsEntryPoint(chain.fx, bad), {
        ok: true,
        context: '0x',
        validationData: expected | 1n,
      });
    });

    it('passes simulation untampered (the baseline of every negative case below)', async () => {
      assert.equal(await failedOpReason(chain.fx, await sponsoredOp()), 'ok');
    });

    const caps = (op: OpV07) => decodePaymasterAndDataV07(op.paymasterAndData).caps;
    // Signed with caps equal to the limits (exact binding): one more gas than signed is above its cap.
    const tampers: Array<[string, (op: OpV07) => OpV07]> = [
      ['callGasLimit', (op) => ({ ...op, callGasLimit: op.callGasLimit + 1n })],
      ['verificationGasLimit', (op) => ({ ...op, verificationGasLimit: op.verificationGasLimit + 1n })],
      ['preVerificationGas', (op) => ({ ...op, preVerificationGas: op.preVerificationGas + 1n })],
      [
        'maxVerificationGasLimit (the cap)',
        (op) => repack(op, { caps: { ...caps(op), maxVerificationGasLimit: caps(op).maxVerificationGasLimit + 1n } }),
      ],
      [
        'maxCallGasLimit (the cap)',
        (op) => repack(op, { caps: { ...caps(op), maxCallGasLimit: caps(op).maxCallGasLimit + 1n } }),
      ],
      [
        'maxPreVerificationGas (the cap)',
        (op) => repack(op, { caps: { ...caps(op), maxPreVerificationGas: caps(op).maxPreVerificationGas - 1n } }),
      ],
      ['maxFeePerGas', (op) => ({ ...op, maxFeePerGas: op.maxFeePerGas + 1n })],
      ['maxPriorityFeePerGas', (op) => ({ ...op, maxPriorityFeePerGas: op.maxPriorityFeePerGas - 1n })],
      // Nonce key 1, sequence 0: still a nonce the EntryPoint accepts, so only the paymaster can object.
      ['nonce', (op) => ({ ...op, nonce: 1n << 64n })],
      ['callData', (op) => ({ ...op, callData: executeCallData('0x01') })],
      // A trailing byte after the ABI-encoded createAccount call still deploys the same sender.
      ['initCode', (op) => ({ ...op, initCode: concat([op.initCode, '0x00']) })],
      [
        'paymasterVerificationGasLimit',
        (op) =>
          repack(
            { ...op, paymasterVerificationGasLimit: op.paymasterVerificationGasLimit + 1n },
            { paymasterVerificationGasLimit: op.paymasterVerificationGasLimit + 1n },
          ),
      ],
      [
        'paymasterPostOpGasLimit',
        (op) =>
          repack(
            { ...op, paymasterPostOpGasLimit: op.paymasterPostOpGasLimit + 1n },
            { paymasterPostOpGasLimit: op.paymasterPostOpGasLimit + 1n },
          ),
      ],
      ['validUntil', (op) => repack(op, { validUntil: decodePaymasterAndDataV07(op.paymasterAndData).validUntil + 1 })],
      ['validAfter', (op) => repack(op, { validAfter: decodePaymasterAndDataV07(op.paymasterAndData).validAfter + 1 })],
    ];
    for (const [field, mutate] of tampers) {
      it(`rejects ${field} changed after the paymaster signed with ${AA34}`, async () => {
        assert.equal(await failedOpReason(chain.fx, await sponsoredOp(mutate)), AA34);
      });
    }

    it(`rejects the sender changed after the paymaster signed with ${AA34}`, async () => {
      // Two deployed accounts of the same owner at the same nonce: the swap passes the account's own check.
      const deploy = async (salt: bigint) => {
        const op = await buildDeployingOp(chain.fx, {
          sender: await accountAddress(chain.fx, salt),
          initCode: createAccountInitCode(chain.fx, salt),
        });
        const signed = await signPaymaster(chain.fx, op, chain.window);
        assert.equal((await handleOne(chain.fx, await signAccount(chain.fx, signed))).event.args.success, true);
        return op.sender;
      };
      const first = await deploy(0n);
      const second = await deploy(1n);
      const nonce = await entryPointNonce(chain.fx, first);
      assert.equal(await entryPointNonce(chain.fx, second), nonce);
      const plain = await buildDeployingOp(chain.fx, {
        sender: first,
        nonce,
        initCode: '0x',
        verificationGasLimit: 100_000n,
      });
      const signed = await signPaymaster(chain.fx, plain, chain.window);
      assert.equal(await failedOpReason(chain.fx, await signAccount(chain.fx, signed)), 'ok');
      assert.equal(await failedOpReason(chain.fx, await signAccount(chain.fx, { ...signed, sender: second })), AA34);
    });

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

    it(`rejects a window that mixes the block-number flag on one bound only with ${AA34}`, async () => {
      const now = await latestTimestamp(chain.fx);
      const block = Number(await chain.fx.client.getBlockNumber());
      chain.window = { validUntil: FLAG + block + 100, validAfter: now - 60 };
      assert.equal(await failedOpReason(chain.fx, await sponsoredOp()), AA34);
      chain.window = { validUntil: now + 3600, validAfter: FLAG + 1 };
      assert.equal(await failedOpReason(chain.fx, await sponsoredOp()), AA34);
    });

    const elsewhere: Array<[string, () => Promise<Partial<PaymasterSigning>>]> = [
      ['another chain id', async () => ({ signedChainId: 1n })],
      [
        'another PatronPaymasterV07 (same signer, same EntryPoint)',
        async () => ({
          signedPaymaster: await deployPatronPaymasterV07({
            client: chain.fx.client,
            entryPoint: chain.fx.entryPoint,
            owner: chain.fx.client.account.address,
            verifyingSigner: privateKeyToAccount(KEYS.signer).address,
          }),
        }),
      ],
      [
        'another EntryPoint',
        async () => ({
          signedEntryPoint:
            version === '0.7'
              ? '0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108'
              : '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
        }),
      ],
      ['another key', async () => ({ key: KEYS.stranger })],
    ];
    for (const [label, signing] of elsewhere) {
      it(`rejects a signature made for ${label} with ${AA34}`, async () => {
        assert.equal(await failedOpReason(chain.fx, await sponsoredOp((op) => op, await signing())), AA34);
      });
    }

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
      it(`treats a malformed 65-byte signature (${label}) as a failed signature: ${AA34}, not a revert`, async () => {
        const op = await sponsoredOp((signed) =>
          repack(signed, { signature: corrupt(decodePaymasterAndDataV07(signed.paymasterAndData).signature) }),
        );
        assert.equal(await failedOpReason(chain.fx, op), AA34);
      });
    }

    /** Replaces paymasterAndData with raw bytes; the EntryPoint reports AA33 with our custom error inside. */
    async function rejectedAs(paymasterAndData: Hex, errorName: string, args: readonly unknown[]) {
      const op = await buildDeployingOp(chain.fx);
      const outcome = await simulateOp(chain.fx, await signAccount(chain.fx, { ...op, paymasterAndData }));
      assert.deepEqual(outcome, { reason: AA33, inner: { errorName, args } });
    }

    it(`reverts on an unknown mode byte (${AA33}, UnknownMode)`, async () => {
      const signed = await signPaymaster(chain.fx, await buildDeployingOp(chain.fx), chain.window);
      const bytes = hexToBytes(signed.paymasterAndData);
      bytes[52] = 4;
      await rejectedAs(bytesToHex(bytes), 'UnknownMode', [4]);
    });

    // 130: the layout before the gas caps.
    for (const length of [53, 130, 153, 155, 163, 165]) {
      it(`reverts on a ${length}-byte sponsored paymasterAndData (${AA33}, InvalidPaymasterDataLength)`, async () => {
        const signed = await signPaymaster(chain.fx, await buildDeployingOp(chain.fx), chain.window);
        const padded = concat([signed.paymasterAndData, `0x${'00'.repeat(20)}`]);
        await rejectedAs(slice(padded, 0, length), 'InvalidPaymasterDataLength', [BigInt(length), 154n]);
      });
    }

    it(`reverts on a v0.9 suffix that does not hold exactly one 65-byte signature (${AA33})`, async () => {
      const signed = await signPaymaster(chain.fx, await buildDeployingOp(chain.fx), {
        ...chain.window,
        signatureInSuffix: true,
      });
      const pnd = signed.paymasterAndData;
      // The signature one byte shorter, the declared length to match: well-formed for the EntryPoint, not for us.
      const short = concat([slice(pnd, 0, 89 + 64), '0x0040', PAYMASTER_SIG_MAGIC]);
      await rejectedAs(short, 'InvalidPaymasterDataLength', [163n, 164n]);
      // One byte of extra field data before the signature.
      const long = concat([slice(pnd, 0, 89), '0x00', slice(pnd, 89)]);
      await rejectedAs(long, 'InvalidPaymasterDataLength', [165n, 164n]);
    });

    describe('gas caps (the signature bounds the account gas values, for limits estimated after signing)', () => {
      const CAPS: GasCapsV07 = {
        maxVerificationGasLimit: 500_000n,
        maxCallGasLimit: 150_000n,
        maxPreVerificationGas: 80_000n,
      };
      /**
       * What viem's prepareUserOperation does without a stub: paymasterData is asked for first (the service signs
       * caps, not limits), the bundler estimates the limits afterwards and the account signs the final op.
       */
      async function cappedOp(limits: Partial<OpV07> = {}) {
        const unsigned = await buildDeployingOp(chain.fx, {
          verificationGasLimit: 0n,
          callGasLimit: 0n,
          preVerificationGas: 0n,
        });
        const signed = await signPaymaster(chain.fx, unsigned, { ...chain.window, caps: CAPS });
        const estimated = { verificationGasLimit: 400_000n, callGasLimit: 100_000n, preVerificationGas: 60_000n };
        return signAccount(chain.fx, { ...signed, ...estimated, ...limits });
      }

      it('executes an op whose three limits, set after the paymaster signed, are below the caps; the deposit drop is within the prefund at the caps', async () => {
        const op = await cappedOp();
        const depositBefore = await paymasterDeposit(chain.fx);
        const { event } = await handleOne(chain.fx, op);
        assert.equal(event.args.success, true);
        assert.equal(await counterValue(chain.fx), 1n);
        const dropped = depositBefore - (await paymasterDeposit(chain.fx));
        assert.equal(dropped, event.args.actualGasCost);
        const worst = worstCaseCostV07(signedGasOf(op, CAPS), op.maxFeePerGas);
        assert.equal(worst, (500_000n + 150_000n + 100_000n + 0n + 80_000n) * op.maxFeePerGas);
        assert.ok(dropped <= worst, `deposit dropped ${dropped}, worst case ${worst}`);
      });

      it('accepts each limit exactly at its cap', async () => {
        const atCaps = {
          verificationGasLimit: CAPS.maxVerificationGasLimit,
          callGasLimit: CAPS.maxCallGasLimit,
          preVerificationGas: CAPS.maxPreVerificationGas,
        };
        assert.equal(await failedOpReason(chain.fx, await cappedOp(atCaps)), 'ok');
      });

      const above: Array<[string, Partial<OpV07>]> = [
        ['verificationGasLimit', { verificationGasLimit: CAPS.maxVerificationGasLimit + 1n }],
        ['callGasLimit', { callGasLimit: CAPS.maxCallGasLimit + 1n }],
        ['preVerificationGas', { preVerificationGas: CAPS.maxPreVerificationGas + 1n }],
      ];
      for (const [field, limits] of above) {
        it(`rejects ${field} one above its cap with ${AA34} (a signature failure, not a revert)`, async () => {
          const op = await cappedOp(limits);
          assert.equal(await failedOpReason(chain.fx, op), AA34);
          const validated = await validateAsEntryPoint(chain.fx, op);
          assert.ok(validated.ok && (validated.validationData & 1n) === 1n, 'sigFailed, no revert');
        });
      }

      it(`rejects caps raised after signing with ${AA34}, even when the op is within them`, async () => {
        const op = await cappedOp();
        const raised = repack(op, { caps: { ...CAPS, maxCallGasLimit: CAPS.maxCallGasLimit * 2n } });
        assert.equal(await failedOpReason(chain.fx, await signAccount(chain.fx, raised)), AA34);
      });
    });

    it('accepts the signature in the v0.9 suffix form (signed last, on every version)', async () => {
      const op = await sponsoredOp((x) => x, { signatureInSuffix: true });
      assert.equal(size(op.paymasterAndData), 164);
      const { event } = await handleOne(chain.fx, op);
      assert.equal(event.args.success, true);
      assert.equal(await counterValue(chain.fx), 1n);
    });

    it('lets only the EntryPoint call validatePaymasterUserOp and postOp (PaymasterUnauthorized)', async () => {
      const op = await sponsoredOp();
      const caller = chain.fx.stranger.account.address;
      const asStranger = { address: chain.fx.paymaster, abi: patronPaymasterV07Abi, account: caller } as const;
      const outcomes = await Promise.all([
        chain.fx.client
          .simulateContract({
            ...asStranger,
            functionName: 'validatePaymasterUserOp',
            args: [packed(op), `0x${'00'.repeat(32)}`, 0n],
          })
          .then(() => undefined, revertOf),
        chain.fx.client
          .simulateContract({ ...asStranger, functionName: 'postOp', args: [0, '0x', 0n, 0n] })
          .then(() => undefined, revertOf),
      ]);
      for (const outcome of outcomes) {
        assert.deepEqual(outcome, { errorName: 'PaymasterUnauthorized', args: [caller] });
      }
    });

    it('measures the paymasterVerificationGasLimit a sponsored op needs (AA36 below it)', async (t) => {
      const withLimit = async (limit: bigint) => {
        const op = await buildDeployingOp(chain.fx, { paymasterVerificationGasLimit: limit });
        return failedOpReason(chain.fx, await signAccount(chain.fx, await signPaymaster(chain.fx, op, chain.window)));
      };
      let low = 0n;
      let high = 100_000n;
      assert.equal(await withLimit(high), 'ok');
      while (high - low > 1n) {
        const mid = (low + high) / 2n;
        if ((await withLimit(mid)) === 'ok') high = mid;
        else low = mid;
      }
      assert.match(await withLimit(low), /AA36/);
      t.diagnostic(`v${version}: sponsored validation needs paymasterVerificationGasLimit >= ${high}`);
      assert.ok(high < 40_000n, `sponsored validation gas ${high}`);
    });

    if (version === '0.9') {
      it('parallel signing: the account signs first (magic-only hash), the paymaster signature is inserted after', async () => {
        // The stub: the final layout with a dummy signature in the suffix (the length is what gas estimation needs).
        const unsigned = await buildDeployingOp(chain.fx);
        const fields = { mode: 0 as const };
        const stubData = {
          paymaster: chain.fx.paymaster,
          paymasterVerificationGasLimit: unsigned.paymasterVerificationGasLimit,
          paymasterPostOpGasLimit: unsigned.paymasterPostOpGasLimit,
          fields,
          ...chain.window,
          caps: exactCapsV07(unsigned),
          signature: DUMMY_PAYMASTER_SIGNATURE,
          signatureInSuffix: true,
        };
        const stub = { ...unsigned, paymasterAndData: encodePaymasterAndDataV07(stubData) };
        // What the account signs: the userOpHash over prefix || fields || magic (signature and length cut out).
        const magicOnly = concat([slice(stub.paymasterAndData, 0, 89), PAYMASTER_SIG_MAGIC]);
        const accountHash = userOpHashV08({
          userOp: stub,
          entryPoint: chain.fx.entryPoint,
          chainId: chain.fx.chainId,
          version: '0.9',
        });
        assert.equal(
          accountHash,
          await chain.fx.client.readContract({
            address: chain.fx.entryPoint,
            abi: entryPoint09Abi,
            functionName: 'getUserOpHash',
            args: [packed(stub)],
          }),
        );
        // The same hash as an op whose paymasterAndData simply is prefix || fields || magic, hashed whole.
        assert.equal(
          userOpHashV08({
            userOp: { ...stub, paymasterAndData: magicOnly },
            entryPoint: chain.fx.entryPoint,
            chainId: chain.fx.chainId,
            version: '0.8',
          }),
          accountHash,
        );
        const accountSigned = await signAccount(chain.fx, stub);
        // Only now does the service sign; its signature goes into the suffix, the account's stays valid.
        const final = await signPaymaster(chain.fx, accountSigned, { ...chain.window, signatureInSuffix: true });
        assert.equal(userOpHashOf(chain.fx, final), accountHash);
        const { event } = await handleOne(chain.fx, final);
        assert.equal(event.args.success, true);
        assert.equal(event.args.userOpHash, accountHash);
        assert.equal(await counterValue(chain.fx), 1n);
      });

      it('accepts a block-number window, and an expired one is refused (AA37 on v0.9 rc.1)', async () => {
        const block = Number(await chain.fx.client.getBlockNumber());
        chain.window = { validUntil: FLAG + block + 100, validAfter: FLAG + 1 };
        assert.equal(await failedOpReason(chain.fx, await sponsoredOp()), 'ok');
        chain.window = { validUntil: FLAG + block - 1, validAfter: FLAG + 1 };
        // v0.9 reports a paymaster's block range with its own code, AA37, not the timestamp AA32.
        assert.equal(await failedOpReason(chain.fx, await sponsoredOp()), 'AA37 paymaster inval block range');
        chain.window = { validUntil: FLAG + block + 100, validAfter: FLAG + block + 50 };
        assert.equal(await failedOpReason(chain.fx, await sponsoredOp()), 'AA37 paymaster inval block range');
      });
    }

    if (version !== '0.7') {
      describe('EIP-7702 account', () => {
        const eoaKey = testKey(`7702-eoa-${version}`);
        const eoa = privateKeyToAccount(eoaKey);

        /** Deploys a Simple7702Account implementation (v0.8's names its EntryPoint in code, v0.9's takes it). */
        async function deployDelegate(fx: V07Fixture, salt: number): Promise<Address> {
          const { abi, bytecode } = loadAccountAbstractionArtifact(version, 'Simple7702Account');
          const args = version === '0.8' ? [] : [fx.entryPoint];
          // A distinct nonce per salt gives a distinct address; the artifact's code is the same.
          for (let i = 0; i < salt; i++) await fx.client.sendTransaction({ to: fx.client.account.address, value: 0n });
          const hash = await fx.client.deployContract({ abi, bytecode, args });
          const address = (await waitForSuccess(fx.client, hash, 'Simple7702Account')).contractAddress;
          assert.ok(address);
          return address;
        }

        /** The EOA delegates to `delegate` (a type-4 transaction the owner sends and pays for). */
        async function delegateTo(fx: V07Fixture, delegate: Address) {
          const nonce = await fx.client.getTransactionCount({ address: eoa.address });
          const authorization = await eoa.signAuthorization({ contractAddress: delegate, chainId: fx.chainId, nonce });
          const hash = await fx.client.sendTransaction({
            authorizationList: [authorization],
            to: eoa.address,
            data: '0x',
          });
          await waitForSuccess(fx.client, hash, '7702 delegation');
          const code = await fx.client.getCode({ address: eoa.address });
          assert.equal(code, concat(['0xef0100', delegate]).toLowerCase());
        }

        async function op7702(fx: V07Fixture, signing: Partial<PaymasterSigning> & { eip7702Delegate: Address }) {
          const unsigned: OpV07 = {
            ...(await buildDeployingOp(fx)),
            sender: eoa.address,
            nonce: await entryPointNonce(fx, eoa.address),
            initCode: '0x7702000000000000000000000000000000000000',
            verificationGasLimit: 100_000n,
          };
          return signPaymaster(fx, unsigned, { ...chain.window, ...signing });
        }

        it('sponsors an op of an EOA delegated to Simple7702Account (initCode = the 0x7702 marker)', async () => {
          const fx = chain.fx;
          const delegate = await deployDelegate(fx, 0);
          await delegateTo(fx, delegate);
          const signed = await op7702(fx, { eip7702Delegate: delegate });
          const op = await signAccount(fx, signed, { key: eoaKey, eip7702Delegate: delegate });
          const onChain = await fx.client.readContract({
            address: fx.entryPoint,
            abi: entryPoint09Abi,
            functionName: 'getUserOpHash',
            args: [packed(op)],
          });
          assert.equal(
            userOpHashOf(fx, op, delegate),
            onChain,
            'local userOpHash binds the delegate as the EntryPoint does',
          );
          const paymasterHash = await fx.client.readContract({
            address: fx.paymaster,
            abi: patronPaymasterV07Abi,
            functionName: 'getSponsoredHash',
            args: [
              packed(op),
              chain.window.validUntil,
              chain.window.validAfter,
              op.verificationGasLimit,
              op.callGasLimit,
              op.preVerificationGas,
            ],
          });
          const local = sponsoredHashV07(
            {
              userOp: op,
              chainId: BigInt(fx.chainId),
              paymaster: fx.paymaster,
              entryPoint: fx.entryPoint,
              ...chain.window,
              caps: exactCapsV07(op),
              eip7702Delegate: delegate,
            },
            viemKeccak,
          );
          assert.equal(bytesToHex(local), paymasterHash);
          const depositBefore = await paymasterDeposit(fx);
          const { receipt, event } = await handleOne(fx, op);
          assert.equal(event.args.success, true);
          assert.ok(isAddressEqual(event.args.sender, eoa.address));
          assert.equal(await paymasterDeposit(fx), depositBefore - event.args.actualGasCost);
          assert.equal(await counterValue(fx), 1n);
          assert.equal(
            parseEventLogs({ abi: entryPoint09Abi, eventName: 'UserOperationEvent', logs: receipt.logs }).length,
            1,
          );
        });

        it(`refuses the same paymaster signature once the EOA is re-delegated elsewhere (${AA34})`, async () => {
          const fx = chain.fx;
          const first = await deployDelegate(fx, 0);
          const second = await deployDelegate(fx, 1);
          assert.ok(!isAddressEqual(first, second));
          await delegateTo(fx, first);
          const signedForFirst = await op7702(fx, { eip7702Delegate: first });
          assert.equal(
            await failedOpReason(fx, await signAccount(fx, signedForFirst, { key: eoaKey, eip7702Delegate: first })),
            'ok',
          );
          await delegateTo(fx, second);
          // The account signs the new userOpHash (it names the new delegate), so only the paymaster's check fails.
          const accountSigned = await signAccount(fx, signedForFirst, { key: eoaKey, eip7702Delegate: second });
          assert.equal(await failedOpReason(fx, accountSigned), AA34);
          const signedForSecond = await op7702(fx, { eip7702Delegate: second });
          assert.equal(
            await failedOpReason(fx, await signAccount(fx, signedForSecond, { key: eoaKey, eip7702Delegate: second })),
            'ok',
          );
        });
      });
    }

    it(`rejects a signature of the raw hash instead of its EIP-191 digest with ${AA34}`, async () => {
      const op = await buildDeployingOp(chain.fx);
      const raw = await sign({
        hash: bytesToHex(
          sponsoredHashV07(
            {
              userOp: op,
              chainId: BigInt(chain.fx.chainId),
              paymaster: chain.fx.paymaster,
              entryPoint: chain.fx.entryPoint,
              ...chain.window,
              caps: exactCapsV07(op),
            },
            viemKeccak,
          ),
        ),
        privateKey: KEYS.signer,
        to: 'bytes',
      });
      const rawSigned = {
        ...op,
        paymasterAndData: encodePaymasterAndDataV07({
          paymaster: chain.fx.paymaster,
          paymasterVerificationGasLimit: op.paymasterVerificationGasLimit,
          paymasterPostOpGasLimit: op.paymasterPostOpGasLimit,
          fields: { mode: 0 },
          ...chain.window,
          caps: exactCapsV07(op),
          signature: raw,
        }),
      };
      assert.equal(await failedOpReason(chain.fx, await signAccount(chain.fx, rawSigned)), AA34);
    });
  });
}

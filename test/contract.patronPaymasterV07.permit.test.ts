import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type Address,
  bytesToHex,
  concat,
  encodeFunctionData,
  getAddress,
  type Hex,
  isErc6492Signature,
  maxUint256,
  numberToHex,
  parseEventLogs,
  size,
  slice,
} from 'viem';
import { devFiatTokenAbi } from '../src/chain/artifacts.js';
import { patronPaymasterV07Abi } from '../src/chain/deployPatronPaymasterV07.js';
import { waitForSuccess } from '../src/chain/devClient.js';
import type { DevTokenInfo } from '../src/chain/embeddedChain.js';
import { viemKeccak } from '../src/paymaster/entryPoints/abiWords.js';
import type { TokenPermit } from '../src/paymaster/entryPoints/paymasterModes.js';
import { maxPenaltyGas, maxTokenCostV07, POST_OP_OVERHEAD_V07 } from '../src/paymaster/entryPoints/v07/chargesV07.js';
import { tokenHashV07 } from '../src/paymaster/entryPoints/v07/hashesV07.js';
import { decodePaymasterAndDataV07, exactCapsV07 } from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';
import { testKey } from './helpers/patronPaymasterV06.js';
import {
  AA33,
  AA34,
  buildDeployingOp,
  counterValue,
  handleOne,
  mintToken,
  type OpV07,
  opGasPrice,
  packed,
  paymasterDeposit,
  setFeeReceiver,
  signedGasOf,
  signPaymaster,
  simulateOp,
  submitHandleOps,
  tokenBalance,
  useV07Chain,
  VERSIONS,
  validateAsEntryPoint,
} from './helpers/patronPaymasterV07.js';
import {
  eip7702PermitAccount,
  innerSignature,
  type PermitAccount,
  safePermitAccount,
} from './helpers/permitAccounts.js';
import { permitTypedData, tracedOpcodes } from './helpers/permitSigning.js';

/**
 * PatronPaymasterV07's mode 3 on EntryPoints v0.7, v0.8 and v0.9: an account that never approved the paymaster
 * pays in USDC (the dev chain's DevFiatToken, Circle FiatToken v2.2's permit) with a permit carried in the paymaster
 * data. Validation executes the permit, then prefunds the signed maximum as mode 1; postOp refunds and charges.
 * The accounts are real: on v0.7 a Safe 1.4.1 deployed by the op itself (its permit checked by ERC-1271 once its
 * initCode has run), on v0.8 and v0.9 an EOA delegated to Simple7702Account (EIP-7702; the token asks it by
 * ERC-1271 because it has code). Every outcome is what handleOps does on the chain.
 */
const RATE_USDC = 3000n * 10n ** 6n;
const price = { exchangeRate: RATE_USDC, priceMarkup: 1_100_000 };
const CALL_GAS = 100_000n;
const POST_OP_GAS = 50_000n;
/** What the tests give the permit mode's validation; the test below measures what it needs. */
const PERMIT_VERIFICATION_GAS = 250_000n;
const FUNDS = 1_000n * 10n ** 6n;

/** ERC-7562 OP-011's opcodes, banned to every entity in validation (GAS is allowed right before a call). */
const BANNED = new Set([
  'GASPRICE',
  'GASLIMIT',
  'DIFFICULTY',
  'PREVRANDAO',
  'TIMESTAMP',
  'BASEFEE',
  'BLOCKHASH',
  'NUMBER',
  'SELFBALANCE',
  'BALANCE',
  'ORIGIN',
  'CREATE',
  'CREATE2',
  'COINBASE',
  'SELFDESTRUCT',
  'BLOBHASH',
  'BLOBBASEFEE',
  'INVALID',
]);

for (const version of VERSIONS) {
  describe(`PatronPaymasterV07 on EntryPoint v${version} (token mode 3: the account's permit)`, () => {
    let usdc: DevTokenInfo;
    let account: PermitAccount;
    const feeReceiver: Address = getAddress('0x00000000000000000000000000000000fee0fee0');
    const chain = useV07Chain(version, {
      async setUp(fx) {
        [usdc] = fx.tokens as [DevTokenInfo];
        assert.equal(usdc.permit, true, 'the dev chain’s USDC has the permit');
        await setFeeReceiver(fx, feeReceiver);
        account =
          version === '0.7'
            ? await safePermitAccount(fx, testKey(`permit-safe-owner-${version}`))
            : await eip7702PermitAccount(fx, testKey(`permit-7702-${version}`));
      },
    });

    const balanceOf = (who: Address) => tokenBalance(chain.fx, usdc.address, who);
    const allowanceOf = (owner: Address) =>
      chain.fx.client.readContract({
        address: usdc.address,
        abi: devFiatTokenAbi,
        functionName: 'allowance',
        args: [owner, chain.fx.paymaster],
      });
    const permitNonce = (owner: Address) =>
      chain.fx.client.readContract({
        address: usdc.address,
        abi: devFiatTokenAbi,
        functionName: 'nonces',
        args: [owner],
      });

    /** The permit of `value` for the paymaster, signed by the account as its SDK would, 6492 wrapper removed. */
    async function accountPermit(value: bigint, overrides: { spender?: Address } = {}): Promise<TokenPermit> {
      const typed = permitTypedData({
        token: usdc.address,
        tokenName: 'USD Coin (Patron dev chain)',
        chainId: chain.fx.chainId,
        owner: account.address,
        spender: overrides.spender ?? chain.fx.paymaster,
        value,
        nonce: await permitNonce(account.address),
      });
      return { value, signature: innerSignature(await account.signPermitAsSdk(typed)) };
    }

    interface PermitOpOptions {
      readonly value?: bigint;
      readonly permit?: TokenPermit;
      readonly overrides?: Partial<OpV07>;
      readonly signatureInSuffix?: boolean;
    }

    /** The account's op paying in USDC with its permit: signed by the paymaster (mode 3), then by the account. */
    async function permitOp(o: PermitOpOptions = {}) {
      const base = await buildDeployingOp(chain.fx, {
        sender: account.address,
        initCode: account.initCode,
        callData: account.callData,
        callGasLimit: CALL_GAS,
        verificationGasLimit: account.verificationGasLimit,
        paymasterVerificationGasLimit: PERMIT_VERIFICATION_GAS,
        paymasterPostOpGasLimit: POST_OP_GAS,
        ...o.overrides,
      });
      const cap = maxTokenCostV07(signedGasOf(base), base.maxFeePerGas, price, version);
      const permit = o.permit ?? (await accountPermit(o.value ?? cap));
      const token = { token: usdc.address, ...price, maxTokenCost: cap, permit };
      const signing = { ...chain.window, token, ...(o.signatureInSuffix ? { signatureInSuffix: true } : {}) };
      const signed = await signPaymaster(chain.fx, base, signing);
      return { op: await account.signOp(signed), cap, permit };
    }

    it('binds the permit in its hash as getTokenHash(mode 3) then getPermitHash, which the service computes alike', async () => {
      const { op, permit, cap } = await permitOp();
      const fields = {
        validUntil: chain.window.validUntil,
        validAfter: chain.window.validAfter,
        token: usdc.address,
        ...price,
        maxTokenCost: cap,
      };
      const caps = exactCapsV07(op);
      const read = chain.fx.client.readContract;
      const tokenHash = await read({
        address: chain.fx.paymaster,
        abi: patronPaymasterV07Abi,
        functionName: 'getTokenHash',
        args: [
          packed(op),
          3,
          fields.validUntil,
          fields.validAfter,
          caps.maxVerificationGasLimit,
          caps.maxCallGasLimit,
          caps.maxPreVerificationGas,
          fields.token,
          fields.exchangeRate,
          fields.priceMarkup,
          fields.maxTokenCost,
        ],
      });
      const onChain = await read({
        address: chain.fx.paymaster,
        abi: patronPaymasterV07Abi,
        functionName: 'getPermitHash',
        args: [tokenHash, permit.value, permit.signature],
      });
      const params = {
        userOp: op,
        chainId: BigInt(chain.fx.chainId),
        paymaster: chain.fx.paymaster,
        entryPoint: chain.fx.entryPoint,
        caps,
        ...(op.initCode === '0x' ? { senderCodeHash: await codeHash(op.sender) } : {}),
        ...fields,
      };
      assert.equal(bytesToHex(tokenHashV07({ ...params, permit }, viemKeccak)), onChain);
      const other = { ...permit, signature: concat([permit.signature, '0x00']) };
      assert.notEqual(bytesToHex(tokenHashV07({ ...params, permit: other }, viemKeccak)), onChain);
      assert.notEqual(bytesToHex(tokenHashV07({ ...params, permit: { ...permit, value: 1n } }, viemKeccak)), onChain);
      const decoded = decodePaymasterAndDataV07(op.paymasterAndData);
      assert.deepEqual(
        decoded.fields.mode === 1 ? decoded.fields.permit : undefined,
        permit,
        'the codec reads it back',
      );
      assert.equal(size(op.paymasterAndData), 244 + size(permit.signature));
      assert.equal(
        await read({ address: chain.fx.paymaster, abi: patronPaymasterV07Abi, functionName: 'MODE_TOKEN_PERMIT' }),
        3,
      );
    });

    const codeHash = async (who: Address): Promise<Hex> =>
      viemKeccakHex((await chain.fx.client.getCode({ address: who })) ?? '0x');

    it('a first-time account with no allowance pays through its permit: executed in validation, prefund, refund, charge', async (t) => {
      if (version === '0.7') {
        // The SDK's signature of an undeployed Safe is ERC-6492-wrapped; the paymaster data carries the inner one.
        const typed = permitTypedData({
          token: usdc.address,
          tokenName: 'USD Coin (Patron dev chain)',
          chainId: chain.fx.chainId,
          owner: account.address,
          spender: chain.fx.paymaster,
          value: 1n,
          nonce: 0n,
        });
        assert.equal(isErc6492Signature(await account.signPermitAsSdk(typed)), true, 'undeployed: 6492 form');
        assert.equal(await chain.fx.client.getCode({ address: account.address }), undefined, 'not deployed yet');
      }
      const { op, cap, permit } = await permitOp();
      await mintToken(chain.fx, usdc.address, account.address, FUNDS);
      assert.equal(await allowanceOf(account.address), 0n, 'never approved');
      const nonceBefore = await permitNonce(account.address);
      const depositBefore = await paymasterDeposit(chain.fx);
      const { receipt, event, baseFee } = await handleOne(chain.fx, op);
      assert.equal(event.args.success, true);
      const [charged] = parseEventLogs({ abi: patronPaymasterV07Abi, eventName: 'TokenCharged', logs: receipt.logs });
      assert.ok(charged !== undefined);
      const charge = charged.args.charge;
      const pm = getAddress(chain.fx.paymaster);
      const sender = getAddress(account.address);
      const moves = parseEventLogs({ abi: devFiatTokenAbi, eventName: 'Transfer', logs: receipt.logs })
        .filter((l) => getAddress(l.address) === usdc.address)
        .map((l) => [l.args.from, l.args.to, l.args.value]);
      assert.deepEqual(moves, [
        [sender, pm, cap],
        [pm, sender, cap - charge],
        [pm, feeReceiver, charge],
      ]);
      assert.equal(await balanceOf(account.address), FUNDS - charge);
      assert.equal(await allowanceOf(account.address), permit.value - cap, 'what the permit set, minus the prefund');
      assert.equal(await permitNonce(account.address), nonceBefore + 1n, 'the permit was used');
      assert.equal(await counterValue(chain.fx), 1n, 'the call executed');
      const spent = depositBefore - (await paymasterDeposit(chain.fx));
      assert.equal(spent, event.args.actualGasCost);
      const fee = opGasPrice(op, baseFee);
      const chargedWei = charged.args.actualGasCost + (POST_OP_OVERHEAD_V07 + maxPenaltyGas({ ...op, version })) * fee;
      assert.ok(chargedWei >= spent, `charged ${chargedWei} wei for ${spent} spent`);
      t.diagnostic(
        `v${version} ${account.label}: prefund ${cap}, charge ${charge}, allowance left ${permit.value - cap}`,
      );
    });

    it('measures the paymasterVerificationGasLimit mode 3 needs (the permit with its ERC-1271 call, then the prefund)', async (t) => {
      await mintToken(chain.fx, usdc.address, account.address, FUNDS);
      const permit = await accountPermit(10n ** 9n);
      const withLimit = async (limit: bigint) =>
        (
          await simulateOp(
            chain.fx,
            (
              await permitOp({ permit, overrides: { paymasterVerificationGasLimit: limit } })
            ).op,
          )
        ).reason;
      let low = 0n;
      let high = PERMIT_VERIFICATION_GAS;
      assert.equal(await withLimit(high), 'ok');
      while (high - low > 1n) {
        const mid = (low + high) / 2n;
        if ((await withLimit(mid)) === 'ok') high = mid;
        else low = mid;
      }
      assert.notEqual(await withLimit(low), 'ok');
      t.diagnostic(`v${version} ${account.label}: mode 3 validation needs paymasterVerificationGasLimit >= ${high}`);
      assert.ok(high < 200_000n, `mode 3 validation gas ${high}`);
    });

    it(`a bogus permit (signed by another key) is ${AA33} TokenPermitFailed with the token's reason: dropped, no deposit spent`, async () => {
      await mintToken(chain.fx, usdc.address, account.address, FUNDS);
      const real = await accountPermit(10n ** 9n);
      // One byte of r changed: the token's ERC-1271 call into the account answers no.
      const r = Buffer.from(real.signature.slice(2), 'hex');
      r[10] = (r[10] ?? 0) ^ 0xff;
      const bogus: TokenPermit = { ...real, signature: bytesToHex(r) };
      const { op, cap } = await permitOp({ permit: bogus });
      const outcome = await simulateOp(chain.fx, op);
      assert.equal(outcome.reason, AA33);
      assert.equal(outcome.inner?.errorName, 'TokenPermitFailed');
      const [token, allowance, maxTokenCost, reason] = outcome.inner?.args ?? [];
      assert.deepEqual([token, allowance, maxTokenCost], [usdc.address, 0n, cap]);
      assert.match(String(reason), /^0x08c379a0/, 'Error(string) from the token');
      assert.ok(decodeReason(reason as Hex).includes('invalid signature'), decodeReason(reason as Hex));
      // Submitted anyway, the bundle reverts in validation: nothing executes and the deposit is untouched.
      const depositBefore = await paymasterDeposit(chain.fx);
      const { receipt } = await submitHandleOps(chain.fx, [op]).catch(() => ({ receipt: undefined }));
      assert.ok(receipt === undefined || receipt.status === 'reverted', 'the bundle does not go through');
      assert.equal(await paymasterDeposit(chain.fx), depositBefore, 'no deposit spent');
      assert.equal(await balanceOf(account.address), FUNDS);
    });

    it('a permit someone else submitted first (front-run) still prefunds: the allowance it set is used', async () => {
      await mintToken(chain.fx, usdc.address, account.address, FUNDS);
      const { op, cap, permit } = await permitOp();
      // The account must exist for ERC-1271: on v0.7 the Safe is deployed first by its factory, as anyone may.
      if (op.initCode !== '0x') {
        const hash = await chain.fx.stranger.sendTransaction({
          to: slice(op.initCode, 0, 20),
          data: slice(op.initCode, 20),
        });
        await waitForSuccess(chain.fx.stranger, hash, 'Safe deployment by a stranger');
      }
      const hash = await chain.fx.stranger.writeContract({
        address: usdc.address,
        abi: devFiatTokenAbi,
        functionName: 'permit',
        args: [account.address, chain.fx.paymaster, permit.value, maxUint256, permit.signature],
      });
      await waitForSuccess(chain.fx.stranger, hash, 'front-run permit');
      assert.equal(await allowanceOf(account.address), permit.value);
      // The op as signed keeps its initCode only if the account is not deployed (v0.7/v0.8 refuse it otherwise).
      const replayed = op.initCode === '0x' ? op : (await permitOp({ permit, overrides: { initCode: '0x' } })).op;
      assert.deepEqual(await simulateOp(chain.fx, replayed), { reason: 'ok' });
      const { event } = await handleOne(chain.fx, replayed);
      assert.equal(event.args.success, true);
      assert.equal(await allowanceOf(account.address), permit.value - cap, 'the front-run allowance paid the prefund');
    });

    it(`a permit below the signed maximum is ${AA33} TokenAllowanceTooLow (the permit went through, the prefund did not)`, async () => {
      await mintToken(chain.fx, usdc.address, account.address, FUNDS);
      const probe = await permitOp();
      const { op, cap } = await permitOp({ value: probe.cap - 1n });
      assert.deepEqual(await simulateOp(chain.fx, op), {
        reason: AA33,
        inner: { errorName: 'TokenAllowanceTooLow', args: [usdc.address, cap - 1n, cap] },
      });
    });

    it(`an account without the balance is ${AA33} TokenBalanceTooLow after a valid permit`, async () => {
      await mintToken(chain.fx, usdc.address, account.address, 5n);
      const { op, cap } = await permitOp();
      assert.deepEqual(await simulateOp(chain.fx, op), {
        reason: AA33,
        inner: { errorName: 'TokenBalanceTooLow', args: [usdc.address, 5n, cap] },
      });
    });

    it('permit bytes swapped after signing: a bundler breaks the account’s signature (AA24), the sender re-signing breaks Patron’s (AA34)', async () => {
      await mintToken(chain.fx, usdc.address, account.address, FUNDS);
      const { op } = await permitOp({ value: 10n ** 9n });
      const swappedPermit = await accountPermit(10n ** 10n);
      const decoded = decodePaymasterAndDataV07(op.paymasterAndData);
      assert.ok(decoded.fields.mode === 1 && decoded.fields.permit !== undefined);
      const swap = (pnd: Hex, permit: TokenPermit): Hex => {
        // Same length: only the value word and the signature bytes change.
        const before = slice(pnd, 0, 145);
        const after = slice(pnd, 179 + size(permit.signature));
        return concat([
          before,
          numberToHex(permit.value, { size: 32 }),
          numberToHex(size(permit.signature), { size: 2 }),
          permit.signature,
          after,
        ]);
      };
      assert.equal(size(swappedPermit.signature), size(decoded.fields.permit.signature));
      const bundlerSwapped = { ...op, paymasterAndData: swap(op.paymasterAndData, swappedPermit) };
      assert.match((await simulateOp(chain.fx, bundlerSwapped)).reason, /^AA24/);
      const senderSwapped = await account.signOp(bundlerSwapped);
      assert.equal((await simulateOp(chain.fx, senderSwapped)).reason, AA34);
      assert.equal((await simulateOp(chain.fx, op)).reason, 'ok', 'the op as signed passes');
    });

    it('accepts the v0.9 suffix form (the signature after the permit), on every version', async () => {
      await mintToken(chain.fx, usdc.address, account.address, FUNDS);
      const { op, permit } = await permitOp({ signatureInSuffix: true });
      assert.equal(size(op.paymasterAndData), 254 + size(permit.signature));
      assert.equal((await handleOne(chain.fx, op)).event.args.success, true);
    });

    it(`reverts (${AA33}) on a declared permit length over MAX_PERMIT_SIGNATURE_LENGTH, or one that is not the bytes carried`, async () => {
      await mintToken(chain.fx, usdc.address, account.address, FUNDS);
      const { op } = await permitOp();
      const declared = (n: number): OpV07 => ({
        ...op,
        paymasterAndData: concat([
          slice(op.paymasterAndData, 0, 177),
          numberToHex(n, { size: 2 }),
          slice(op.paymasterAndData, 179),
        ]),
      });
      const over = await simulateOp(chain.fx, await account.signOp(declared(2049)));
      assert.deepEqual(over.inner, { errorName: 'PermitSignatureTooLong', args: [2049n, 2048n] });
      const signatureLength = size(op.paymasterAndData) - 244;
      const shorter = await simulateOp(chain.fx, await account.signOp(declared(signatureLength - 1)));
      assert.equal(shorter.reason, AA33);
      assert.equal(shorter.inner?.errorName, 'InvalidPaymasterDataLength');
      const mode4 = await simulateOp(
        chain.fx,
        await account.signOp({
          ...op,
          paymasterAndData: concat([slice(op.paymasterAndData, 0, 52), '0x04', slice(op.paymasterAndData, 53)]),
        }),
      );
      assert.deepEqual(mode4.inner, { errorName: 'UnknownMode', args: [4] });
    });

    it('validation runs no opcode ERC-7562 bans (OP-011), the ERC-1271 call into the account included', async () => {
      await mintToken(chain.fx, usdc.address, account.address, FUNDS);
      const { op } = await permitOp({ overrides: { initCode: '0x' } });
      if (version === '0.7') {
        // The Safe must exist for its ERC-1271: deployed by its factory, then traced as the EntryPoint calls.
        const hash = await chain.fx.stranger.sendTransaction({
          to: slice(account.initCode, 0, 20),
          data: slice(account.initCode, 20),
        });
        await waitForSuccess(chain.fx.stranger, hash, 'Safe deployment');
      }
      const signed = await account.signOp((await permitOp({ overrides: { initCode: '0x' } })).op);
      assert.equal((await validateAsEntryPoint(chain.fx, signed)).ok, true);
      const ops = await tracedOpcodes(chain.fx.client, {
        from: chain.fx.entryPoint,
        to: chain.fx.paymaster,
        data: encodeFunctionData({
          abi: patronPaymasterV07Abi,
          functionName: 'validatePaymasterUserOp',
          args: [packed(signed), `0x${'00'.repeat(32)}`, 0n],
        }),
      });
      const banned = ops.filter((o, i) => BANNED.has(o.op) || (o.op === 'GAS' && !/CALL$/.test(ops[i + 1]?.op ?? '')));
      assert.deepEqual(banned, [], 'no banned opcode in the paymaster, the token or the account');
      assert.ok(
        ops.some((o) => o.op === 'STATICCALL' && o.depth >= 2),
        'the token asked the account (ERC-1271) inside the paymaster’s validation',
      );
      assert.ok(op.sender === signed.sender);
    });
  });
}

function viemKeccakHex(code: Hex): Hex {
  return bytesToHex(viemKeccak.keccak256(Buffer.from(code.slice(2), 'hex')));
}

/** The string of an Error(string) revert. */
function decodeReason(data: Hex): string {
  const length = Number(BigInt(slice(data, 36, 68)));
  return Buffer.from(slice(data, 68, 68 + length).slice(2), 'hex').toString('utf8');
}

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import createKeccakHash from 'keccak';
import {
  type Address,
  bytesToHex,
  concat,
  encodeAbiParameters,
  encodePacked,
  getAddress,
  type Hex,
  keccak256,
  numberToHex,
  parseAbiParameters,
  size,
  slice,
} from 'viem';
import { getUserOperationHash, type UserOperation } from 'viem/account-abstraction';
import { isEip7702InitCode } from '../../../chain/eip7702InitCode.js';
import { ValidationError } from '../../../errors/PatronError.js';
import { type Keccak, viemKeccak } from '../abiWords.js';
import { MODE_SPONSORED, MODE_TOKEN, MODE_TOKEN_PERMIT, type TokenPaymasterFields } from '../paymasterModes.js';
import { DUMMY_SIGNATURE_BYTES } from '../v06/gasEstimatorV06.js';
import { maxPenaltyGas, maxTokenCostV07, tokenChargeV07, worstCaseCostV07 } from './chargesV07.js';
import {
  packUserOperationV07,
  type SponsoredHashParamsV07,
  sponsoredHashV07,
  tokenHashV07,
  userOpHashForVersion,
  userOpHashV07,
  userOpHashV08,
} from './hashesV07.js';
import {
  DUMMY_PAYMASTER_SIGNATURE,
  decodePaymasterAndDataV07,
  type EntryPointVersionV07,
  encodePaymasterAndDataV07,
  exactCapsV07,
  PAYMASTER_SIG_MAGIC,
  type PaymasterAndDataV07,
  SPONSORED_PAYMASTER_AND_DATA_LENGTH_V07,
  SPONSORED_SUFFIXED_LENGTH_V07,
  TOKEN_PAYMASTER_AND_DATA_LENGTH_V07,
  TOKEN_PERMIT_PAYMASTER_AND_DATA_LENGTH_V07,
  TOKEN_SUFFIXED_LENGTH_V07,
  type UnsignedUserOperationV07,
  type UserOperationV07,
  withinCapsV07,
} from './patronPaymasterV07.js';

const MAX_UINT256 = (1n << 256n) - 1n;
const MAX_UINT128 = (1n << 128n) - 1n;
const MAX_UINT64 = (1n << 64n) - 1n;
const MAX_UINT48 = 2 ** 48 - 1;
const MARKER_20: Hex = '0x7702000000000000000000000000000000000000';

// The `keccak` addon returns Buffers; the interface must work with it as it does with viem's Uint8Arrays.
const nativeKeccak: Keccak = { keccak256: (data) => createKeccakHash('keccak256').update(Buffer.from(data)).digest() };

/** Deterministic PRNG (xorshift32) so a failure reproduces; the seed is in the test name. */
function prng(seed: number) {
  let x = seed >>> 0 || 1;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  const bytes = (n: number) => Uint8Array.from({ length: n }, () => Math.floor(next() * 256));
  const pick = <T>(items: readonly T[]): T => {
    const item = items[Math.floor(next() * items.length)];
    if (item === undefined) throw new Error('empty choice');
    return item;
  };
  return { next, bytes, pick };
}
type Rng = ReturnType<typeof prng>;

function randomUint(rng: Rng, bytes: number): bigint {
  const max = (1n << BigInt(bytes * 8)) - 1n;
  const edge = [0n, 1n, 0xffffffffffffffffn, 1n << 64n, max];
  if (rng.next() < 0.4) return rng.pick(edge);
  return BigInt(bytesToHex(rng.bytes(1 + Math.floor(rng.next() * bytes))));
}

const address = (rng: Rng): Address => getAddress(bytesToHex(rng.bytes(20)));

/** A random op; a third of them carry an EIP-7702 initCode, in its three forms. */
function randomOp(rng: Rng): UnsignedUserOperationV07 & { paymasterAndData: Hex } {
  const lengths = [0, 1, 31, 32, 33, 64, 200, 4096];
  const initCode = rng.pick<Hex>([
    bytesToHex(rng.bytes(rng.pick(lengths))),
    concat([address(rng), bytesToHex(rng.bytes(rng.pick(lengths)))]),
    '0x7702',
    MARKER_20,
    concat([MARKER_20, bytesToHex(rng.bytes(rng.pick([1, 36, 100])))]),
  ]);
  return {
    sender: address(rng),
    nonce: randomUint(rng, 32),
    initCode,
    callData: bytesToHex(rng.bytes(rng.pick(lengths))),
    callGasLimit: randomUint(rng, 16),
    verificationGasLimit: randomUint(rng, 16),
    preVerificationGas: randomUint(rng, 32),
    maxFeePerGas: randomUint(rng, 16),
    maxPriorityFeePerGas: randomUint(rng, 16),
    paymasterVerificationGasLimit: randomUint(rng, 16),
    paymasterPostOpGasLimit: randomUint(rng, 16),
    paymasterAndData: '0x',
  };
}

function randomParams(rng: Rng): SponsoredHashParamsV07 {
  return {
    userOp: randomOp(rng),
    chainId: rng.pick([1n, 31337n, 8453n, MAX_UINT256]),
    paymaster: address(rng),
    entryPoint: address(rng),
    validUntil: rng.pick([0, 1, MAX_UINT48, Math.floor(rng.next() * MAX_UINT48)]),
    validAfter: rng.pick([0, 1, MAX_UINT48, Math.floor(rng.next() * MAX_UINT48)]),
    // randomUint's edges include 2^64, one past a cap's range: wrapped to 0.
    caps: {
      maxVerificationGasLimit: BigInt.asUintN(64, randomUint(rng, 8)),
      maxCallGasLimit: BigInt.asUintN(64, randomUint(rng, 8)),
      maxPreVerificationGas: BigInt.asUintN(64, randomUint(rng, 8)),
    },
    eip7702Delegate: address(rng),
    senderCodeHash: bytesToHex(rng.bytes(32)),
  };
}

const pair = (high: bigint, low: bigint): Hex => encodePacked(['uint128', 'uint128'], [high, low]);

/** The contract's initCodeHash written with viem's helpers (Eip7702Support's substitution, EXTCODEHASH). */
function referenceInitCodeHash(initCode: Hex, delegate: Address | undefined, senderCodeHash: Hex | undefined): Hex {
  if (initCode === '0x') {
    if (senderCodeHash === undefined) throw new Error('test op without initCode and without the sender code hash');
    return senderCodeHash;
  }
  if (!isEip7702InitCode(Buffer.from(initCode.slice(2), 'hex'))) return keccak256(initCode);
  if (delegate === undefined) throw new Error('test op without a delegate');
  return keccak256(size(initCode) <= 20 ? delegate : concat([delegate, slice(initCode, 20)]));
}

/** The contract's hashes with viem's generic ABI encoder: the independent reference. */
function referenceOpHash(p: SponsoredHashParamsV07): Hex {
  const u = p.userOp;
  return keccak256(
    encodeAbiParameters(
      parseAbiParameters('address, uint256, bytes32, bytes32, uint256, uint256, bytes32, uint256, bytes32'),
      [
        u.sender,
        u.nonce,
        referenceInitCodeHash(u.initCode, p.eip7702Delegate, p.senderCodeHash),
        keccak256(u.callData),
        p.caps.maxVerificationGasLimit,
        p.caps.maxCallGasLimit,
        pair(u.paymasterVerificationGasLimit, u.paymasterPostOpGasLimit),
        p.caps.maxPreVerificationGas,
        pair(u.maxPriorityFeePerGas, u.maxFeePerGas),
      ],
    ),
  );
}

function referenceSponsoredHash(p: SponsoredHashParamsV07): Hex {
  return keccak256(
    encodeAbiParameters(parseAbiParameters('bytes32, uint256, address, address, uint8, uint48, uint48'), [
      referenceOpHash(p),
      p.chainId,
      p.paymaster,
      p.entryPoint,
      MODE_SPONSORED,
      p.validUntil,
      p.validAfter,
    ]),
  );
}

function referenceTokenHash(p: SponsoredHashParamsV07 & TokenPaymasterFields): Hex {
  const tokenHash = keccak256(
    encodeAbiParameters(
      parseAbiParameters(
        'bytes32, uint256, address, address, uint8, uint48, uint48, address, uint128, uint32, uint128',
      ),
      [
        referenceOpHash(p),
        p.chainId,
        p.paymaster,
        p.entryPoint,
        p.permit === undefined ? MODE_TOKEN : MODE_TOKEN_PERMIT,
        p.validUntil,
        p.validAfter,
        p.token,
        p.exchangeRate,
        p.priceMarkup,
        p.maxTokenCost,
      ],
    ),
  );
  if (p.permit === undefined) return tokenHash;
  // The contract's getPermitHash: the mode-3 token hash, the permit's value and the hash of its signature.
  return keccak256(
    encodeAbiParameters(parseAbiParameters('bytes32, uint256, bytes32'), [
      tokenHash,
      p.permit.value,
      keccak256(p.permit.signature),
    ]),
  );
}

const baseOp: UserOperationV07 = {
  sender: '0x1111111111111111111111111111111111111111',
  nonce: 0n,
  initCode: '0x',
  callData: '0x',
  callGasLimit: 100_000n,
  verificationGasLimit: 600_000n,
  preVerificationGas: 60_000n,
  maxFeePerGas: 2_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
  paymasterVerificationGasLimit: 60_000n,
  paymasterPostOpGasLimit: 70_000n,
  signature: '0x',
};
const baseParams: SponsoredHashParamsV07 = {
  userOp: baseOp,
  chainId: 31337n,
  paymaster: '0x2222222222222222222222222222222222222222',
  entryPoint: '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
  validUntil: 1_900_000_000,
  validAfter: 0,
  caps: { maxVerificationGasLimit: 600_000n, maxCallGasLimit: 100_000n, maxPreVerificationGas: 60_000n },
  senderCodeHash: '0x0cf33e42b59cd30ce43a3d95a9c4de2589047c5e0968708337764f9776097210',
};
const signature = Uint8Array.from({ length: 65 }, (_, i) => i + 1);
const tokenFields = {
  mode: MODE_TOKEN,
  token: getAddress('0x833589fcd6edb6e08f4c7c32d4f71b54bda02913'),
  exchangeRate: 3_000_000_000n,
  priceMarkup: 1_100_000,
  maxTokenCost: 14_031_600n,
} as const;

describe('sponsoredHashV07 / tokenHashV07', () => {
  for (const seed of [1, 2, 3, 42, 4337]) {
    it(`equal the viem encodeAbiParameters reference for 30 random ops (seed ${seed})`, () => {
      const rng = prng(seed);
      for (let i = 0; i < 30; i++) {
        const params = randomParams(rng);
        const expected = referenceSponsoredHash(params);
        assert.equal(bytesToHex(sponsoredHashV07(params, viemKeccak)), expected, `op ${i}`);
        assert.equal(bytesToHex(sponsoredHashV07(params, nativeKeccak)), expected, `op ${i} (native keccak)`);
        const token = {
          ...params,
          token: address(rng),
          exchangeRate: randomUint(rng, 16),
          priceMarkup: rng.pick([1_000_000, 1_100_000, 2_000_000, 2 ** 32 - 1]),
          maxTokenCost: randomUint(rng, 16),
        };
        assert.equal(bytesToHex(tokenHashV07(token, viemKeccak)), referenceTokenHash(token), `token op ${i}`);
        const permit = { value: randomUint(rng, 32), signature: bytesToHex(rng.bytes(rng.pick([0, 65, 300]))) };
        const permitted = { ...token, permit };
        assert.equal(
          bytesToHex(tokenHashV07(permitted, nativeKeccak)),
          referenceTokenHash(permitted),
          `permit op ${i}`,
        );
      }
    });
  }

  it('covers every signed field: changing any one of them changes the hash', () => {
    const base = bytesToHex(sponsoredHashV07(baseParams, viemKeccak));
    const op = (change: Partial<UserOperationV07>): SponsoredHashParamsV07 => ({
      ...baseParams,
      userOp: { ...baseOp, ...change },
    });
    const variants: Array<[string, SponsoredHashParamsV07]> = [
      ['sender', op({ sender: '0x1111111111111111111111111111111111111112' })],
      ['nonce', op({ nonce: 1n })],
      ['initCode', op({ initCode: '0x00' })],
      ['senderCodeHash', { ...baseParams, senderCodeHash: keccak256('0xef0100') }],
      ['callData', op({ callData: '0x00' })],
      ['maxVerificationGasLimit', { ...baseParams, caps: { ...baseParams.caps, maxVerificationGasLimit: 600_001n } }],
      ['maxCallGasLimit', { ...baseParams, caps: { ...baseParams.caps, maxCallGasLimit: 100_001n } }],
      ['maxPreVerificationGas', { ...baseParams, caps: { ...baseParams.caps, maxPreVerificationGas: 60_001n } }],
      ['maxFeePerGas', op({ maxFeePerGas: 2_000_000_001n })],
      ['maxPriorityFeePerGas', op({ maxPriorityFeePerGas: 1n })],
      ['paymasterVerificationGasLimit', op({ paymasterVerificationGasLimit: 60_001n })],
      ['paymasterPostOpGasLimit', op({ paymasterPostOpGasLimit: 70_001n })],
      ['chainId', { ...baseParams, chainId: 1n }],
      ['paymaster', { ...baseParams, paymaster: '0x2222222222222222222222222222222222222223' }],
      ['entryPoint', { ...baseParams, entryPoint: '0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108' }],
      ['validUntil', { ...baseParams, validUntil: 1_900_000_001 }],
      ['validAfter', { ...baseParams, validAfter: 1 }],
    ];
    for (const [field, params] of variants) {
      assert.notEqual(bytesToHex(sponsoredHashV07(params, viemKeccak)), base, field);
      assert.equal(bytesToHex(sponsoredHashV07(params, viemKeccak)), referenceSponsoredHash(params), field);
    }
    const token = bytesToHex(tokenHashV07({ ...baseParams, ...tokenFields }, viemKeccak));
    assert.notEqual(token, base, 'the mode is signed');
  });

  it("does not read the op's own account gas values: the caps stand for them", () => {
    const base = bytesToHex(sponsoredHashV07(baseParams, viemKeccak));
    // What viem's prepareUserOperation asks with (zero limits) and what the bundler estimates afterwards.
    for (const limits of [
      { verificationGasLimit: 0n, callGasLimit: 0n, preVerificationGas: 0n },
      { verificationGasLimit: 123_456n, callGasLimit: 7n, preVerificationGas: 50_000n },
      { verificationGasLimit: MAX_UINT128 + 1n, callGasLimit: -1n, preVerificationGas: MAX_UINT256 + 1n },
    ]) {
      const params = { ...baseParams, userOp: { ...baseOp, ...limits } };
      assert.equal(bytesToHex(sponsoredHashV07(params, viemKeccak)), base);
      assert.equal(
        bytesToHex(tokenHashV07({ ...params, ...tokenFields }, viemKeccak)),
        bytesToHex(tokenHashV07({ ...baseParams, ...tokenFields }, viemKeccak)),
      );
    }
  });

  it('binds the EIP-7702 delegate, not the marker, and requires it for a 7702 initCode only', () => {
    const delegate: Address = '0x3333333333333333333333333333333333333333';
    for (const initCode of ['0x7702', MARKER_20, concat([MARKER_20, '0xc0ffee'])] as const) {
      const params = { ...baseParams, userOp: { ...baseOp, initCode }, eip7702Delegate: delegate };
      const hash = bytesToHex(sponsoredHashV07(params, viemKeccak));
      assert.equal(hash, referenceSponsoredHash(params), initCode);
      const other = { ...params, eip7702Delegate: '0x3333333333333333333333333333333333333334' } as const;
      assert.notEqual(bytesToHex(sponsoredHashV07(other, viemKeccak)), hash, `${initCode}: another delegate`);
      const { eip7702Delegate: _, ...without } = params;
      assert.throws(() => sponsoredHashV07(without, viemKeccak), /eip7702Delegate/, initCode);
    }
    // A factory initCode ignores a delegate passed along.
    const plain = { ...baseParams, eip7702Delegate: delegate };
    assert.deepEqual(sponsoredHashV07(plain, viemKeccak), sponsoredHashV07(baseParams, viemKeccak));
  });

  it("binds the sender's code hash for an op without initCode, requires it there, and ignores it elsewhere", () => {
    const hash = bytesToHex(sponsoredHashV07(baseParams, viemKeccak));
    assert.equal(hash, referenceSponsoredHash(baseParams));
    const redelegated = { ...baseParams, senderCodeHash: keccak256(concat(['0xef0100', MARKER_20])) };
    assert.notEqual(bytesToHex(sponsoredHashV07(redelegated, viemKeccak)), hash, 'another code, another digest');
    const { senderCodeHash: _, ...without } = baseParams;
    assert.throws(() => sponsoredHashV07(without, viemKeccak), /senderCodeHash/);
    assert.throws(() => tokenHashV07({ ...without, ...tokenFields }, viemKeccak), /senderCodeHash/);
    assert.throws(() => sponsoredHashV07({ ...baseParams, senderCodeHash: '0x1234' }, viemKeccak), /32 bytes/);
    // A factory initCode or a 7702 marker hashes what it always did, whatever code hash is passed along.
    for (const initCode of [concat([baseParams.paymaster, '0xc0ffee']), MARKER_20] as const) {
      const params = { ...baseParams, userOp: { ...baseOp, initCode }, eip7702Delegate: baseParams.paymaster };
      const { senderCodeHash: __, ...plain } = params;
      assert.deepEqual(sponsoredHashV07(params, viemKeccak), sponsoredHashV07(plain, viemKeccak), initCode);
    }
  });

  it('recognises exactly the initCodes EntryPoint v0.8 treats as 7702', () => {
    const is = (hex: Hex) => isEip7702InitCode(Buffer.from(hex.slice(2), 'hex'));
    assert.equal(is('0x7702'), true);
    assert.equal(is('0x770200'), true);
    assert.equal(is(MARKER_20), true);
    assert.equal(is(concat([MARKER_20, '0x01'])), true);
    assert.equal(is('0x77'), false, 'under 2 bytes');
    assert.equal(is('0x'), false);
    assert.equal(is('0x7703'), false);
    assert.equal(is('0x77020001'), false, 'a non-zero byte inside the first 20');
    assert.equal(is('0x7702000000000000000000000000000000000001'), false);
  });

  it('rejects values the contract could not have hashed', () => {
    const op = (change: Partial<UserOperationV07>): SponsoredHashParamsV07 => ({
      ...baseParams,
      userOp: { ...baseOp, ...change },
    });
    const bad: Array<[string, SponsoredHashParamsV07]> = [
      ['negative nonce', op({ nonce: -1n })],
      ['nonce above uint256', op({ nonce: MAX_UINT256 + 1n })],
      [
        'maxCallGasLimit above uint64',
        { ...baseParams, caps: { ...baseParams.caps, maxCallGasLimit: MAX_UINT64 + 1n } },
      ],
      [
        'negative maxVerificationGasLimit',
        { ...baseParams, caps: { ...baseParams.caps, maxVerificationGasLimit: -1n } },
      ],
      [
        'maxPreVerificationGas above uint64',
        { ...baseParams, caps: { ...baseParams.caps, maxPreVerificationGas: MAX_UINT64 + 1n } },
      ],
      ['maxFeePerGas above uint128', op({ maxFeePerGas: MAX_UINT128 + 1n })],
      ['paymasterPostOpGasLimit above uint128', op({ paymasterPostOpGasLimit: MAX_UINT128 + 1n })],
      ['negative paymasterVerificationGasLimit', op({ paymasterVerificationGasLimit: -1n })],
      ['non-hex callData', op({ callData: '0xzz' })],
      ['odd-length initCode', op({ initCode: '0xabc' })],
      ['short sender', op({ sender: '0x1111' })],
      ['non-hex entryPoint', { ...baseParams, entryPoint: `0x${'1'.repeat(39)}z` }],
      ['validUntil above uint48', { ...baseParams, validUntil: MAX_UINT48 + 1 }],
      ['fractional validAfter', { ...baseParams, validAfter: 1.5 }],
      ['bad delegate', { ...op({ initCode: '0x7702' }), eip7702Delegate: '0x33' }],
    ];
    for (const [label, params] of bad) {
      assert.throws(() => sponsoredHashV07(params, viemKeccak), ValidationError, label);
    }
  });
});

describe('encodePaymasterAndDataV07 / decodePaymasterAndDataV07', () => {
  const sponsored: PaymasterAndDataV07 = {
    paymaster: getAddress(`0x${'ab'.repeat(20)}`),
    paymasterVerificationGasLimit: 60_000n,
    paymasterPostOpGasLimit: MAX_UINT128,
    fields: { mode: MODE_SPONSORED },
    validUntil: 1_900_000_000,
    validAfter: 12,
    caps: { maxVerificationGasLimit: 1_000_000n, maxCallGasLimit: 2n ** 40n + 3n, maxPreVerificationGas: 70_000n },
    signature,
  };
  const token: PaymasterAndDataV07 = { ...sponsored, fields: tokenFields };

  it('lays out the v0.7 prefix, the mode fields and the signature, inline or in the v0.9 suffix', () => {
    const prefix = encodePacked(
      ['address', 'uint128', 'uint128'],
      [sponsored.paymaster, sponsored.paymasterVerificationGasLimit, sponsored.paymasterPostOpGasLimit],
    );
    const window = encodePacked(
      ['uint48', 'uint48', 'uint64', 'uint64', 'uint64'],
      [
        sponsored.validUntil,
        sponsored.validAfter,
        sponsored.caps.maxVerificationGasLimit,
        sponsored.caps.maxCallGasLimit,
        sponsored.caps.maxPreVerificationGas,
      ],
    );
    const tokenTail = encodePacked(
      ['address', 'uint128', 'uint32', 'uint128'],
      [tokenFields.token, tokenFields.exchangeRate, tokenFields.priceMarkup, tokenFields.maxTokenCost],
    );
    const sig = bytesToHex(signature);
    const suffix = concat([sig, '0x0041', PAYMASTER_SIG_MAGIC]);
    const cases: Array<[PaymasterAndDataV07, Hex, number]> = [
      [sponsored, concat([prefix, '0x00', window, sig]), SPONSORED_PAYMASTER_AND_DATA_LENGTH_V07],
      [token, concat([prefix, '0x01', window, tokenTail, sig]), TOKEN_PAYMASTER_AND_DATA_LENGTH_V07],
      [
        { ...sponsored, signatureInSuffix: true },
        concat([prefix, '0x00', window, suffix]),
        SPONSORED_SUFFIXED_LENGTH_V07,
      ],
      [
        { ...token, signatureInSuffix: true },
        concat([prefix, '0x01', window, tokenTail, suffix]),
        TOKEN_SUFFIXED_LENGTH_V07,
      ],
    ];
    for (const [data, expected, length] of cases) {
      const encoded = encodePaymasterAndDataV07(data);
      assert.equal(encoded, expected);
      assert.equal(size(encoded), length);
      assert.deepEqual(decodePaymasterAndDataV07(encoded), {
        ...data,
        signatureInSuffix: data.signatureInSuffix === true,
      });
    }
  });

  it('round-trips the uint48 and uint128 extremes', () => {
    const extreme: PaymasterAndDataV07 = {
      ...token,
      paymasterVerificationGasLimit: MAX_UINT128,
      paymasterPostOpGasLimit: 0n,
      validUntil: MAX_UINT48,
      validAfter: MAX_UINT48,
      caps: { maxVerificationGasLimit: MAX_UINT64, maxCallGasLimit: 0n, maxPreVerificationGas: MAX_UINT64 },
      fields: { ...tokenFields, exchangeRate: MAX_UINT128, maxTokenCost: MAX_UINT128, priceMarkup: 2_000_000 },
    };
    const decoded = decodePaymasterAndDataV07(encodePaymasterAndDataV07(extreme));
    assert.deepEqual(decoded, { ...extreme, signatureInSuffix: false });
    assert.equal(encodePaymasterAndDataV07(decoded), encodePaymasterAndDataV07(extreme));
    // Mode 3 (permit): the value word, the uint16 length and the permit signature before the signature.
    const permitted: PaymasterAndDataV07 = {
      ...extreme,
      fields: {
        ...tokenFields,
        exchangeRate: MAX_UINT128,
        maxTokenCost: MAX_UINT128,
        priceMarkup: 2_000_000,
        permit: { value: MAX_UINT256, signature: `0x${'5a'.repeat(2048)}` },
      },
    };
    const withPermit = encodePaymasterAndDataV07(permitted);
    assert.equal(size(withPermit), TOKEN_PERMIT_PAYMASTER_AND_DATA_LENGTH_V07 + 2048);
    assert.equal(slice(withPermit, 52, 53), '0x03');
    assert.equal(slice(withPermit, 145, 179), concat([numberToHex(MAX_UINT256), '0x0800']));
    assert.deepEqual(decodePaymasterAndDataV07(withPermit), { ...permitted, signatureInSuffix: false });
    const suffixedPermit = encodePaymasterAndDataV07({ ...permitted, signatureInSuffix: true });
    assert.deepEqual(decodePaymasterAndDataV07(suffixedPermit), { ...permitted, signatureInSuffix: true });
    // Mode 2 (guaranteed): the same layout, mode byte 2.
    const guaranteed: PaymasterAndDataV07 = {
      ...extreme,
      fields: { ...tokenFields, exchangeRate: MAX_UINT128, maxTokenCost: 1n, priceMarkup: 2_000_000, guaranteed: true },
    };
    const encoded = encodePaymasterAndDataV07(guaranteed);
    assert.equal(encoded.slice(2 + 104, 2 + 106), '02');
    assert.deepEqual(decodePaymasterAndDataV07(encoded), { ...guaranteed, signatureInSuffix: false });
  });

  it('refuses to encode bad inputs', () => {
    const bad: Array<[string, PaymasterAndDataV07]> = [
      ['64-byte signature', { ...sponsored, signature: new Uint8Array(64) }],
      ['validUntil above uint48', { ...sponsored, validUntil: MAX_UINT48 + 1 }],
      ['negative validAfter', { ...sponsored, validAfter: -1 }],
      ['short paymaster', { ...sponsored, paymaster: '0x1234' }],
      ['gas limit above uint128', { ...sponsored, paymasterVerificationGasLimit: MAX_UINT128 + 1n }],
      ['cap above uint64', { ...sponsored, caps: { ...sponsored.caps, maxCallGasLimit: MAX_UINT64 + 1n } }],
      ['negative cap', { ...sponsored, caps: { ...sponsored.caps, maxPreVerificationGas: -1n } }],
      ['rate above uint128', { ...token, fields: { ...tokenFields, exchangeRate: MAX_UINT128 + 1n } }],
      ['markup above uint32', { ...token, fields: { ...tokenFields, priceMarkup: 2 ** 32 } }],
      ['non-hex token', { ...token, fields: { ...tokenFields, token: `0x${'q'.repeat(40)}` } }],
      [
        'permit signature over 2048 bytes',
        { ...token, fields: { ...tokenFields, permit: { value: 1n, signature: `0x${'00'.repeat(2049)}` } } },
      ],
      [
        'permit value over uint256',
        { ...token, fields: { ...tokenFields, permit: { value: 1n << 256n, signature: '0x' } } },
      ],
      [
        'permit with the guarantee',
        { ...token, fields: { ...tokenFields, guaranteed: true, permit: { value: 1n, signature: '0x' } } },
      ],
    ];
    for (const [label, data] of bad) assert.throws(() => encodePaymasterAndDataV07(data), ValidationError, label);
  });

  it('refuses to decode what the contract reverts on', () => {
    const inline = encodePaymasterAndDataV07(sponsored);
    const suffixed = encodePaymasterAndDataV07({ ...sponsored, signatureInSuffix: true });
    const tokenInline = encodePaymasterAndDataV07(token);
    const withByte = (hex: Hex, at: number, byte: string): Hex =>
      `${hex.slice(0, 2 + 2 * at)}${byte}${hex.slice(4 + 2 * at)}` as Hex;
    const cases: Array<[string, Hex, RegExp]> = [
      ['one byte short', inline.slice(0, -2) as Hex, /must be 154 bytes, got 153/],
      ['one byte long', `${inline}00`, /must be 154 bytes, got 155/],
      ['the pre-caps length', slice(inline, 0, 130), /must be 154 bytes, got 130/],
      ['prefix only', inline.slice(0, 2 + 104) as Hex, /too short/],
      ['mode 4', withByte(inline, 52, '04'), /unknown paymaster mode 4/],
      ['mode 3 too short to declare its permit', withByte(inline, 52, '03'), /mode 3 must be at least 244 bytes/],
      ['mode 1 at the sponsored length', withByte(inline, 52, '01'), /must be 210 bytes, got 154/],
      ['suffix declaring 64 bytes', withByte(suffixed, 155, '40'), /declare 65/],
      ['suffix one byte short', concat([slice(suffixed, 0, 153), slice(suffixed, 154)]), /must be 164 bytes, got 163/],
      ['token one byte long', `${tokenInline}00`, /must be 210 bytes, got 211/],
      [
        'markup below 1e6',
        encodePaymasterAndDataV07({ ...token, fields: { ...tokenFields, priceMarkup: 999_999 } }),
        /priceMarkup/,
      ],
      [
        'markup above 2e6',
        encodePaymasterAndDataV07({ ...token, fields: { ...tokenFields, priceMarkup: 2_000_001 } }),
        /priceMarkup/,
      ],
      ['non-hex', `${inline.slice(0, -2)}zz` as Hex, /hex/],
    ];
    for (const [label, input, message] of cases) {
      assert.throws(
        () => decodePaymasterAndDataV07(input),
        (err: unknown) => {
          assert.ok(err instanceof ValidationError, label);
          assert.match(err.message, message, label);
          return true;
        },
      );
    }
  });

  it('reuses the v0.6 dummy signature for stubs (a well-formed ECDSA signature of the final length)', () => {
    assert.equal(DUMMY_PAYMASTER_SIGNATURE, DUMMY_SIGNATURE_BYTES);
    const stub = encodePaymasterAndDataV07({
      ...sponsored,
      signature: DUMMY_PAYMASTER_SIGNATURE,
      signatureInSuffix: true,
    });
    assert.equal(size(stub), SPONSORED_SUFFIXED_LENGTH_V07);
  });
});

/** viem's UserOperation of a version, from our flat op and its paymasterAndData (the paymaster split out). */
function toViemOp(
  op: UnsignedUserOperationV07 & { paymasterAndData: Hex },
  version: EntryPointVersionV07,
  extra: { delegate?: Address; paymasterSignature?: Hex } = {},
): UserOperation {
  const initCode = op.initCode;
  const is7702 = isEip7702InitCode(Buffer.from(initCode.slice(2), 'hex'));
  const factory = size(initCode) >= 20 ? slice(initCode, 0, 20) : initCode === '0x' ? undefined : initCode;
  const common = {
    sender: op.sender,
    nonce: op.nonce,
    callData: op.callData,
    callGasLimit: op.callGasLimit,
    verificationGasLimit: op.verificationGasLimit,
    preVerificationGas: op.preVerificationGas,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    signature: '0x' as Hex,
    ...(factory === undefined ? {} : { factory, factoryData: size(initCode) > 20 ? slice(initCode, 20) : '0x' }),
    ...(is7702 && extra.delegate !== undefined
      ? { authorization: { address: extra.delegate, chainId: 1, nonce: 0, r: '0x00', s: '0x00', yParity: 0 } as const }
      : {}),
  };
  const pnd = op.paymasterAndData;
  const paymaster =
    size(pnd) >= 52
      ? {
          paymaster: slice(pnd, 0, 20),
          paymasterVerificationGasLimit: BigInt(slice(pnd, 20, 36)),
          paymasterPostOpGasLimit: BigInt(slice(pnd, 36, 52)),
          paymasterData: size(pnd) > 52 ? slice(pnd, 52) : '0x',
          ...(extra.paymasterSignature === undefined ? {} : { paymasterSignature: extra.paymasterSignature }),
        }
      : {};
  return { ...common, ...paymaster } as UserOperation<typeof version>;
}

describe('userOpHashV07 / userOpHashV08 (pinned to viem getUserOperationHash)', () => {
  const entryPoints: Record<EntryPointVersionV07, Address> = {
    '0.7': '0x0000000071727De22E5E9d8BAf0edAc6f37da032',
    '0.8': '0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108',
    '0.9': '0x433709009B8330FDa32311DF1C2AFA402eD8D009',
  };
  const pndSponsored = encodePaymasterAndDataV07({
    paymaster: baseParams.paymaster,
    paymasterVerificationGasLimit: 60_000n,
    paymasterPostOpGasLimit: 0n,
    fields: { mode: MODE_SPONSORED },
    validUntil: 1,
    validAfter: 2,
    caps: exactCapsV07(baseOp),
    signature,
  });

  for (const version of ['0.7', '0.8', '0.9'] as const) {
    it(`equals viem for v${version} on 30 random ops with and without paymasterAndData`, () => {
      const rng = prng(version === '0.7' ? 7 : version === '0.8' ? 8 : 9);
      let compared = 0;
      let compared7702 = 0;
      for (let i = 0; i < 30; i++) {
        const random = randomOp(rng);
        // v0.7 has no 7702 substitution: a 7702 initCode there is an ordinary (failing) factory call.
        const op = { ...random, paymasterAndData: rng.pick<Hex>(['0x', pndSponsored]) };
        const delegate = address(rng);
        const is7702 = isEip7702InitCode(Buffer.from(op.initCode.slice(2), 'hex'));
        if (version === '0.7' && is7702) continue;
        // viem only knows the marker padded to 20 bytes (or exactly 0x7702): skip the other short forms.
        if (is7702 && size(op.initCode) < 20 && op.initCode !== '0x7702') continue;
        const chainId = rng.pick([1, 31337, 8453]);
        const expected = getUserOperationHash({
          chainId,
          entryPointAddress: entryPoints[version],
          entryPointVersion: version,
          userOperation: toViemOp(op, version, { delegate }),
        });
        const args = { userOp: op, entryPoint: entryPoints[version], chainId, eip7702Delegate: delegate };
        assert.equal(userOpHashForVersion({ ...args, version }, viemKeccak), expected, `op ${i}`);
        assert.equal(userOpHashForVersion({ ...args, version }, nativeKeccak), expected, `op ${i} (native keccak)`);
        compared++;
        if (is7702) compared7702++;
      }
      assert.ok(compared >= 15, `${compared} ops compared`);
      if (version !== '0.7') assert.ok(compared7702 >= 3, `${compared7702} EIP-7702 ops compared`);
    });
  }

  it('v0.9: a paymaster signature in the suffix is outside the hash, as viem puts it (magic kept)', () => {
    const data: PaymasterAndDataV07 = {
      paymaster: baseParams.paymaster,
      paymasterVerificationGasLimit: 60_000n,
      paymasterPostOpGasLimit: 70_000n,
      fields: tokenFields,
      validUntil: 1,
      validAfter: 2,
      caps: exactCapsV07(baseOp),
      signature,
      signatureInSuffix: true,
    };
    const withSignature = { ...baseOp, paymasterAndData: encodePaymasterAndDataV07(data) };
    const withDummy = {
      ...baseOp,
      paymasterAndData: encodePaymasterAndDataV07({ ...data, signature: DUMMY_PAYMASTER_SIGNATURE }),
    };
    const args = (op: typeof withSignature) => ({
      userOp: op,
      entryPoint: entryPoints['0.9'],
      chainId: 1,
      version: '0.9' as const,
    });
    const hash = userOpHashV08(args(withSignature));
    assert.equal(userOpHashV08(args(withDummy)), hash, 'the account can sign before the paymaster does');
    const fieldsOnly = slice(withSignature.paymasterAndData, 52, 52 + 93);
    const viemOp = toViemOp(
      { ...baseOp, paymasterAndData: concat([slice(withSignature.paymasterAndData, 0, 52), fieldsOnly]) },
      '0.9',
      {
        paymasterSignature: bytesToHex(signature),
      },
    );
    assert.equal(
      hash,
      getUserOperationHash({
        chainId: 1,
        entryPointAddress: entryPoints['0.9'],
        entryPointVersion: '0.9',
        userOperation: viemOp,
      }),
    );
    // v0.8 knows no suffix: the signature is hashed like any byte, so another one is another hash.
    const v08 = (op: typeof withSignature) => userOpHashV08({ ...args(op), version: '0.8' });
    assert.notEqual(v08(withSignature), v08(withDummy));
    // An inline signature is inside the hash on every version.
    const inline = { ...baseOp, paymasterAndData: encodePaymasterAndDataV07({ ...data, signatureInSuffix: false }) };
    const inlineDummy = {
      ...baseOp,
      paymasterAndData: encodePaymasterAndDataV07({
        ...data,
        signatureInSuffix: false,
        signature: DUMMY_PAYMASTER_SIGNATURE,
      }),
    };
    assert.notEqual(userOpHashV08(args(inline)), userOpHashV08(args(inlineDummy)));
  });

  it('v0.9: a suffix declaring more than paymasterAndData holds is refused (the EntryPoint reverts)', () => {
    const pnd = concat([slice(pndSponsored, 0, 60), '0xffff', PAYMASTER_SIG_MAGIC]);
    const args = { userOp: { ...baseOp, paymasterAndData: pnd }, entryPoint: entryPoints['0.9'], chainId: 1 };
    assert.throws(() => userOpHashV08({ ...args, version: '0.9' }), ValidationError);
    // A zero length is no signature: the whole field is hashed.
    const zero = concat([slice(pndSponsored, 0, 60), '0x0000', PAYMASTER_SIG_MAGIC]);
    const zeroArgs = { ...args, userOp: { ...baseOp, paymasterAndData: zero } };
    assert.equal(userOpHashV08({ ...zeroArgs, version: '0.9' }), userOpHashV08({ ...zeroArgs, version: '0.8' }));
  });

  it('packs the op as the EntryPoint takes it', () => {
    const packed = packUserOperationV07({ ...baseOp, paymasterAndData: pndSponsored });
    assert.equal(packed.accountGasLimits, pair(baseOp.verificationGasLimit, baseOp.callGasLimit));
    assert.equal(packed.gasFees, pair(baseOp.maxPriorityFeePerGas, baseOp.maxFeePerGas));
    assert.equal(packed.paymasterAndData, pndSponsored);
    assert.throws(
      () => packUserOperationV07({ ...baseOp, callGasLimit: MAX_UINT128 + 1n, paymasterAndData: '0x' }),
      ValidationError,
    );
    assert.equal(
      userOpHashV07({ userOp: { ...baseOp, paymasterAndData: '0x' }, entryPoint: entryPoints['0.7'], chainId: 1 })
        .length,
      66,
    );
  });
});

describe('maxPenaltyGas / worstCaseCostV07 / token charge', () => {
  it('v0.7: 10 % of callGasLimit + paymasterPostOpGasLimit together (one division, as the EntryPoint rounds)', () => {
    assert.equal(maxPenaltyGas({ callGasLimit: 100_000n, paymasterPostOpGasLimit: 70_000n, version: '0.7' }), 17_000n);
    assert.equal(maxPenaltyGas({ callGasLimit: 5n, paymasterPostOpGasLimit: 5n, version: '0.7' }), 1n);
    assert.equal(maxPenaltyGas({ callGasLimit: 0n, paymasterPostOpGasLimit: 0n, version: '0.7' }), 0n);
  });

  for (const version of ['0.8', '0.9'] as const) {
    it(`v${version}: only the postOp penalty, and only above 40,000 unused gas`, () => {
      const penalty = (paymasterPostOpGasLimit: bigint) =>
        maxPenaltyGas({ callGasLimit: 10_000_000n, paymasterPostOpGasLimit, version });
      assert.equal(penalty(0n), 0n);
      assert.equal(penalty(40_000n), 0n, 'at exactly 40,000 the EntryPoint charges nothing');
      assert.equal(penalty(40_001n), 4_000n);
      assert.equal(penalty(70_000n), 7_000n);
    });
  }

  it('worst case: the prefund at the caps, every cap and paymaster limit at maxFeePerGas', () => {
    const gas = {
      maxVerificationGasLimit: 1n,
      maxCallGasLimit: 2n,
      paymasterVerificationGasLimit: 3n,
      paymasterPostOpGasLimit: 4n,
      maxPreVerificationGas: 5n,
    };
    assert.equal(worstCaseCostV07(gas, 7n), 105n);
  });

  it('exactCapsV07 signs the limits themselves; withinCapsV07 is the contract check (each value <= its cap)', () => {
    const caps = exactCapsV07(baseOp);
    assert.deepEqual(caps, {
      maxVerificationGasLimit: 600_000n,
      maxCallGasLimit: 100_000n,
      maxPreVerificationGas: 60_000n,
    });
    assert.equal(withinCapsV07(baseOp, caps), true);
    assert.equal(
      withinCapsV07({ ...baseOp, verificationGasLimit: 0n, callGasLimit: 0n, preVerificationGas: 0n }, caps),
      true,
    );
    assert.equal(withinCapsV07({ ...baseOp, verificationGasLimit: 600_001n }, caps), false);
    assert.equal(withinCapsV07({ ...baseOp, callGasLimit: 100_001n }, caps), false);
    assert.equal(withinCapsV07({ ...baseOp, preVerificationGas: 60_001n }, caps), false);
    assert.throws(() => exactCapsV07({ ...baseOp, callGasLimit: MAX_UINT64 + 1n }), ValidationError);
  });

  it('charges the formula, capped by the signed maximum, and the maximum bounds the worst case', () => {
    const price = { exchangeRate: 3_000_000_000n, priceMarkup: 1_100_000 };
    const charge = (actualGasCost: bigint, maxTokenCost: bigint) =>
      tokenChargeV07({
        actualGasCost,
        actualUserOpFeePerGas: 2n * 10n ** 9n,
        maxPenaltyGas: 7_000n,
        price,
        maxTokenCost,
      });
    // (1e15 + 57,000 × 2e9) wei × 3000e6 × 1.1e6 / 1e24, rounded up.
    const wei = 10n ** 15n + 57_000n * 2n * 10n ** 9n;
    assert.equal(charge(10n ** 15n, MAX_UINT128), (wei * 3_000_000_000n * 1_100_000n + 10n ** 24n - 1n) / 10n ** 24n);
    assert.equal(charge(10n ** 15n, 7n), 7n);
    const gas = {
      maxVerificationGasLimit: 500_000n,
      maxCallGasLimit: 100_000n,
      paymasterVerificationGasLimit: 60_000n,
      paymasterPostOpGasLimit: 70_000n,
      maxPreVerificationGas: 60_000n,
    };
    for (const version of ['0.7', '0.8', '0.9'] as const) {
      const cap = maxTokenCostV07(gas, 2n * 10n ** 9n, price, version);
      // The penalty bound at the cap of callGasLimit: an op within the caps has at most this one.
      const penalty = maxPenaltyGas({ callGasLimit: gas.maxCallGasLimit, paymasterPostOpGasLimit: 70_000n, version });
      const worst = tokenChargeV07({
        actualGasCost: worstCaseCostV07(gas, 2n * 10n ** 9n),
        actualUserOpFeePerGas: 2n * 10n ** 9n,
        maxPenaltyGas: penalty,
        price,
        maxTokenCost: MAX_UINT128,
      });
      assert.equal(cap, worst, version);
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import createKeccakHash from 'keccak';
import {
  type Address,
  bytesToHex,
  encodeAbiParameters,
  encodePacked,
  getAddress,
  type Hex,
  hashMessage,
  keccak256,
  parseAbiParameters,
} from 'viem';
import { ValidationError } from '../../../errors/PatronError.js';
import { eip191Digest, type Keccak, viemKeccak } from '../abiWords.js';
import { MODE_SPONSORED, MODE_TOKEN, type TokenPaymasterFields } from '../paymasterModes.js';
import {
  decodePaymasterAndData,
  encodeSponsoredPaymasterAndData,
  encodeTokenPaymasterAndData,
  SPONSORED_PAYMASTER_AND_DATA_LENGTH,
  type SponsoredHashParams,
  sponsoredHashV06,
  TOKEN_PAYMASTER_AND_DATA_LENGTH,
  tokenHashV06,
  type UserOperationV06,
} from './patronPaymasterV06.js';

const MAX_UINT256 = (1n << 256n) - 1n;
const MAX_UINT48 = 2 ** 48 - 1;

/** The contract's hashes written with viem's generic ABI encoder: the independent reference. */
function referenceSponsoredHash(p: SponsoredHashParams): Hex {
  const u = p.userOp;
  const opHash = keccak256(
    encodeAbiParameters(
      parseAbiParameters('address, uint256, bytes32, bytes32, uint256, uint256, uint256, uint256, uint256'),
      [
        u.sender,
        u.nonce,
        keccak256(u.initCode),
        keccak256(u.callData),
        u.callGasLimit,
        u.verificationGasLimit,
        u.preVerificationGas,
        u.maxFeePerGas,
        u.maxPriorityFeePerGas,
      ],
    ),
  );
  return keccak256(
    encodeAbiParameters(parseAbiParameters('bytes32, uint256, address, uint8, uint48, uint48'), [
      opHash,
      p.chainId,
      p.paymaster,
      MODE_SPONSORED,
      p.validUntil,
      p.validAfter,
    ]),
  );
}

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

function randomUint(rng: Rng): bigint {
  const edge = [0n, 1n, 0xffffffffffffffffn, 1n << 64n, (1n << 128n) + 7n, MAX_UINT256];
  if (rng.next() < 0.4) return rng.pick(edge);
  return BigInt(bytesToHex(rng.bytes(1 + Math.floor(rng.next() * 32))));
}

function randomUserOp(rng: Rng): UserOperationV06 {
  const lengths = [0, 1, 31, 32, 33, 64, 200, 4096];
  return {
    sender: getAddress(bytesToHex(rng.bytes(20))),
    nonce: randomUint(rng),
    initCode: bytesToHex(rng.bytes(rng.pick(lengths))),
    callData: bytesToHex(rng.bytes(rng.pick(lengths))),
    callGasLimit: randomUint(rng),
    verificationGasLimit: randomUint(rng),
    preVerificationGas: randomUint(rng),
    maxFeePerGas: randomUint(rng),
    maxPriorityFeePerGas: randomUint(rng),
    paymasterAndData: bytesToHex(rng.bytes(rng.pick([0, 98]))),
    signature: bytesToHex(rng.bytes(65)),
  };
}

function randomParams(rng: Rng): SponsoredHashParams {
  return {
    userOp: randomUserOp(rng),
    chainId: rng.pick([1n, 31337n, 8453n, MAX_UINT256, randomUint(rng)]),
    paymaster: getAddress(bytesToHex(rng.bytes(20))),
    validUntil: rng.pick([0, 1, MAX_UINT48, Math.floor(rng.next() * MAX_UINT48)]),
    validAfter: rng.pick([0, 1, MAX_UINT48, Math.floor(rng.next() * MAX_UINT48)]),
  };
}

// The `keccak` addon returns Buffers; the interface must work with it as it does with viem's Uint8Arrays.
const nativeKeccak: Keccak = { keccak256: (data) => createKeccakHash('keccak256').update(Buffer.from(data)).digest() };

const baseOp: UserOperationV06 = {
  sender: '0x1111111111111111111111111111111111111111',
  nonce: 0n,
  initCode: '0x',
  callData: '0x',
  callGasLimit: 100_000n,
  verificationGasLimit: 600_000n,
  preVerificationGas: 60_000n,
  maxFeePerGas: 2_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
  paymasterAndData: '0x',
  signature: '0x',
};
const baseParams: SponsoredHashParams = {
  userOp: baseOp,
  chainId: 31337n,
  paymaster: '0x2222222222222222222222222222222222222222',
  validUntil: 1_900_000_000,
  validAfter: 0,
};
const signature = Uint8Array.from({ length: 65 }, (_, i) => i + 1);

describe('sponsoredHashV06', () => {
  for (const seed of [1, 2, 3, 42, 4337]) {
    it(`equals the viem encodeAbiParameters reference for 40 random ops (seed ${seed})`, () => {
      const rng = prng(seed);
      for (let i = 0; i < 40; i++) {
        const params = randomParams(rng);
        const expected = referenceSponsoredHash(params);
        assert.equal(bytesToHex(sponsoredHashV06(params, viemKeccak)), expected, `op ${i}`);
        assert.equal(bytesToHex(sponsoredHashV06(params, nativeKeccak)), expected, `op ${i} (native keccak)`);
      }
    });
  }

  it('covers every signed field: changing any one of them changes the hash', () => {
    const base = bytesToHex(sponsoredHashV06(baseParams, viemKeccak));
    const variants: Array<[string, SponsoredHashParams]> = [
      ['sender', { ...baseParams, userOp: { ...baseOp, sender: '0x1111111111111111111111111111111111111112' } }],
      ['nonce', { ...baseParams, userOp: { ...baseOp, nonce: 1n } }],
      ['initCode', { ...baseParams, userOp: { ...baseOp, initCode: '0x00' } }],
      ['callData', { ...baseParams, userOp: { ...baseOp, callData: '0x00' } }],
      ['callGasLimit', { ...baseParams, userOp: { ...baseOp, callGasLimit: 100_001n } }],
      ['verificationGasLimit', { ...baseParams, userOp: { ...baseOp, verificationGasLimit: 600_001n } }],
      ['preVerificationGas', { ...baseParams, userOp: { ...baseOp, preVerificationGas: 60_001n } }],
      ['maxFeePerGas', { ...baseParams, userOp: { ...baseOp, maxFeePerGas: 2_000_000_001n } }],
      ['maxPriorityFeePerGas', { ...baseParams, userOp: { ...baseOp, maxPriorityFeePerGas: 1n } }],
      ['chainId', { ...baseParams, chainId: 1n }],
      ['paymaster', { ...baseParams, paymaster: '0x2222222222222222222222222222222222222223' }],
      ['validUntil', { ...baseParams, validUntil: 1_900_000_001 }],
      ['validAfter', { ...baseParams, validAfter: 1 }],
    ];
    for (const [field, params] of variants) {
      assert.notEqual(bytesToHex(sponsoredHashV06(params, viemKeccak)), base, field);
      assert.equal(bytesToHex(sponsoredHashV06(params, viemKeccak)), referenceSponsoredHash(params), field);
    }
  });

  it('ignores paymasterAndData and signature, which carry the signature itself', () => {
    const signed = { ...baseParams, userOp: { ...baseOp, paymasterAndData: '0xabcd', signature: '0x1234' } } as const;
    assert.deepEqual(sponsoredHashV06(signed, viemKeccak), sponsoredHashV06(baseParams, viemKeccak));
  });

  it('rejects values the contract could not have hashed', () => {
    const bad: Array<[string, SponsoredHashParams]> = [
      ['negative nonce', { ...baseParams, userOp: { ...baseOp, nonce: -1n } }],
      ['nonce above uint256', { ...baseParams, userOp: { ...baseOp, nonce: MAX_UINT256 + 1n } }],
      ['gas above uint256', { ...baseParams, userOp: { ...baseOp, maxFeePerGas: MAX_UINT256 + 1n } }],
      ['non-hex callData', { ...baseParams, userOp: { ...baseOp, callData: '0xzz' } }],
      ['odd-length initCode', { ...baseParams, userOp: { ...baseOp, initCode: '0xabc' } }],
      ['unprefixed callData', { ...baseParams, userOp: { ...baseOp, callData: 'abcd' as Hex } }],
      ['short sender', { ...baseParams, userOp: { ...baseOp, sender: '0x1111' } }],
      ['non-hex sender', { ...baseParams, userOp: { ...baseOp, sender: `0x${'g'.repeat(40)}` } }],
      ['non-hex paymaster', { ...baseParams, paymaster: `0x${'1'.repeat(39)}z` }],
      ['validUntil above uint48', { ...baseParams, validUntil: MAX_UINT48 + 1 }],
      ['negative validAfter', { ...baseParams, validAfter: -1 }],
      ['fractional validUntil', { ...baseParams, validUntil: 1.5 }],
      ['chainId above uint256', { ...baseParams, chainId: MAX_UINT256 + 1n }],
    ];
    for (const [label, params] of bad) {
      assert.throws(() => sponsoredHashV06(params, viemKeccak), ValidationError, label);
    }
  });
});

describe('eip191Digest', () => {
  it('equals viem hashMessage({ raw }) (what OpenZeppelin toEthSignedMessageHash computes)', () => {
    const hash = sponsoredHashV06(baseParams, viemKeccak);
    assert.equal(bytesToHex(eip191Digest(hash, viemKeccak)), hashMessage({ raw: hash }));
    assert.equal(bytesToHex(eip191Digest(hash, nativeKeccak)), hashMessage({ raw: hash }));
  });

  it('rejects a hash that is not 32 bytes', () => {
    assert.throws(() => eip191Digest(new Uint8Array(31), viemKeccak), ValidationError);
    assert.throws(() => eip191Digest(new Uint8Array(33), viemKeccak), ValidationError);
  });
});

describe('encodeSponsoredPaymasterAndData / decodePaymasterAndData', () => {
  const data = { paymaster: getAddress(`0x${'ab'.repeat(20)}`), validUntil: 1_900_000_000, validAfter: 12, signature };

  it('lays out paymaster || 0x00 || uint48 || uint48 || signature (98 bytes)', () => {
    const encoded = encodeSponsoredPaymasterAndData(data);
    const packed = encodePacked(
      ['address', 'uint8', 'uint48', 'uint48', 'bytes'],
      [data.paymaster, 0, data.validUntil, data.validAfter, bytesToHex(signature)],
    );
    assert.equal(encoded, packed);
    assert.equal((encoded.length - 2) / 2, SPONSORED_PAYMASTER_AND_DATA_LENGTH);
  });

  it('round-trips, including the uint48 extremes', () => {
    for (const [validUntil, validAfter] of [
      [0, 0],
      [MAX_UINT48, MAX_UINT48],
      [1_900_000_000, 1_700_000_000],
    ] as const) {
      const encoded = encodeSponsoredPaymasterAndData({ ...data, validUntil, validAfter });
      const decoded = decodePaymasterAndData(encoded);
      assert.deepEqual(decoded, { ...data, validUntil, validAfter, mode: MODE_SPONSORED });
      assert.equal(encodeSponsoredPaymasterAndData(decoded), encoded);
    }
  });

  it('decodes lowercase input to a checksummed paymaster', () => {
    const encoded = encodeSponsoredPaymasterAndData({ ...data, paymaster: data.paymaster.toLowerCase() as Address });
    assert.equal(decodePaymasterAndData(encoded).paymaster, data.paymaster);
  });

  it('refuses to encode bad inputs', () => {
    assert.throws(() => encodeSponsoredPaymasterAndData({ ...data, signature: new Uint8Array(64) }), ValidationError);
    assert.throws(() => encodeSponsoredPaymasterAndData({ ...data, signature: new Uint8Array(66) }), ValidationError);
    assert.throws(() => encodeSponsoredPaymasterAndData({ ...data, validUntil: MAX_UINT48 + 1 }), ValidationError);
    assert.throws(() => encodeSponsoredPaymasterAndData({ ...data, validAfter: -1 }), ValidationError);
    assert.throws(() => encodeSponsoredPaymasterAndData({ ...data, paymaster: '0x1234' }), ValidationError);
    assert.throws(
      () => encodeSponsoredPaymasterAndData({ ...data, paymaster: `0x${'q'.repeat(40)}` }),
      ValidationError,
    );
  });

  it('refuses to decode a wrong length, an unknown mode or non-hex', () => {
    const encoded = encodeSponsoredPaymasterAndData(data);
    const withMode = (mode: string): Hex => `${encoded.slice(0, 42)}${mode}${encoded.slice(44)}` as Hex;
    const cases: Array<[string, Hex, RegExp]> = [
      ['one byte short', encoded.slice(0, -2) as Hex, /must be 98 bytes, got 97/],
      ['one byte long', `${encoded}00`, /must be 98 bytes, got 99/],
      ['paymaster only', encoded.slice(0, 42) as Hex, /too short/],
      ['empty', '0x', /too short/],
      ['mode 1 at the sponsored length', withMode('01'), /token paymasterAndData must be 154 bytes, got 98/],
      ['mode 3', withMode('03'), /unknown paymaster mode 3/],
      ['mode 255', withMode('ff'), /unknown paymaster mode 255/],
      ['non-hex', `${encoded.slice(0, -2)}zz` as Hex, /hex/],
      ['odd length', `${encoded}0` as Hex, /hex/],
    ];
    for (const [label, input, message] of cases) {
      assert.throws(
        () => decodePaymasterAndData(input),
        (err: unknown) => {
          assert.ok(err instanceof ValidationError, label);
          assert.match(err.message, message, label);
          return true;
        },
      );
    }
  });
});

/** The token mode's hash with viem's generic encoder: the independent reference for tokenHashV06. */
function referenceTokenHash(p: SponsoredHashParams & TokenPaymasterFields): Hex {
  const sponsoredPreimageOpHash = keccak256(
    encodeAbiParameters(
      parseAbiParameters('address, uint256, bytes32, bytes32, uint256, uint256, uint256, uint256, uint256'),
      [
        p.userOp.sender,
        p.userOp.nonce,
        keccak256(p.userOp.initCode),
        keccak256(p.userOp.callData),
        p.userOp.callGasLimit,
        p.userOp.verificationGasLimit,
        p.userOp.preVerificationGas,
        p.userOp.maxFeePerGas,
        p.userOp.maxPriorityFeePerGas,
      ],
    ),
  );
  return keccak256(
    encodeAbiParameters(
      parseAbiParameters('bytes32, uint256, address, uint8, uint48, uint48, address, uint128, uint32, uint128'),
      [
        sponsoredPreimageOpHash,
        p.chainId,
        p.paymaster,
        MODE_TOKEN,
        p.validUntil,
        p.validAfter,
        p.token,
        p.exchangeRate,
        p.priceMarkup,
        p.maxTokenCost,
      ],
    ),
  );
}

describe('tokenHashV06 / encodeTokenPaymasterAndData', () => {
  const MAX_UINT128 = (1n << 128n) - 1n;
  for (const seed of [7, 99, 2024]) {
    it(`equals the viem encodeAbiParameters reference for 40 random ops (seed ${seed})`, () => {
      const rng = prng(seed);
      for (let i = 0; i < 40; i++) {
        const params = {
          ...randomParams(rng),
          token: getAddress(bytesToHex(rng.bytes(20))),
          exchangeRate: rng.pick([0n, 1n, 3_000_000_000n, MAX_UINT128]),
          priceMarkup: rng.pick([1_000_000, 1_100_000, 2_000_000, 2 ** 32 - 1]),
          maxTokenCost: rng.pick([0n, 1n, 14_031_600n, MAX_UINT128]),
        };
        const expected = referenceTokenHash(params);
        assert.equal(bytesToHex(tokenHashV06(params, viemKeccak)), expected, `op ${i}`);
        assert.equal(bytesToHex(tokenHashV06(params, nativeKeccak)), expected, `op ${i} (native keccak)`);
      }
    });
  }

  it('is not the sponsored hash of the same op and window (the mode byte is signed)', () => {
    const fields = { token: baseParams.paymaster, exchangeRate: 1n, priceMarkup: 1_000_000, maxTokenCost: 1n };
    assert.notEqual(
      bytesToHex(tokenHashV06({ ...baseParams, ...fields }, viemKeccak)),
      bytesToHex(sponsoredHashV06(baseParams, viemKeccak)),
    );
  });

  it('round-trips 154 bytes with the uint128 and uint32 extremes, and rejects out-of-range fields', () => {
    const data = {
      paymaster: baseParams.paymaster,
      validUntil: MAX_UINT48,
      validAfter: 1,
      token: getAddress('0x833589fcd6edb6e08f4c7c32d4f71b54bda02913'),
      exchangeRate: MAX_UINT128,
      priceMarkup: 2 ** 32 - 1,
      maxTokenCost: (1n << 127n) + 5n,
      signature,
    };
    const encoded = encodeTokenPaymasterAndData(data);
    assert.equal((encoded.length - 2) / 2, TOKEN_PAYMASTER_AND_DATA_LENGTH);
    assert.deepEqual(decodePaymasterAndData(encoded), { ...data, mode: MODE_TOKEN });
    // Mode 2 (guaranteed): the same layout, byte 20 = 2.
    const guaranteed = encodeTokenPaymasterAndData({ ...data, guaranteed: true });
    assert.equal(guaranteed.slice(2 + 40, 2 + 42), '02');
    assert.deepEqual(decodePaymasterAndData(guaranteed), { ...data, mode: MODE_TOKEN, guaranteed: true });
    assert.throws(() => encodeTokenPaymasterAndData({ ...data, exchangeRate: MAX_UINT128 + 1n }), /uint128/);
    assert.throws(() => encodeTokenPaymasterAndData({ ...data, maxTokenCost: -1n }), /uint128/);
    assert.throws(() => encodeTokenPaymasterAndData({ ...data, priceMarkup: 2 ** 32 }), /uint32/);
    assert.throws(() => decodePaymasterAndData(`${encoded}00`), /must be 154 bytes, got 155/);
  });
});

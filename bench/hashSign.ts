import { createRequire } from 'node:module';
import { keccak_256 } from '@noble/hashes/sha3';
import { keccak256 as viemKeccak256 } from 'viem';
import { type CryptoBackend, jsCryptoBackend, loadNativeCryptoBackend } from '../src/crypto/cryptoBackend.js';
import { eip191Digest, type Keccak, memoKeccak } from '../src/paymaster/entryPoints/abiWords.js';
import {
  encodeSponsoredPaymasterAndData,
  sponsoredHashV06,
  type UserOperationV06,
  userOpHashV06,
} from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { nonceOf, simpleAccountOp } from './sampleOp.js';

/**
 * Micro-benchmark of the signing path, per crypto backend: µs of CPU per `sponsoredHashV06` (four keccaks:
 * initCode, callData, the op hash, the sponsored hash), per `eip191Digest`, per signature, and for the whole
 * sponsorship signature (hash + digest + sign + encode). Then keccak256 alone, per implementation and input
 * size. In-process, one thread, after a warm-up. Usage: `npm run bench:hash-sign [-- milliseconds per case]`.
 */
const budgetMs = Number(process.argv[2] ?? 1000);

/** Runs `f` for about `budgetMs` after a warm-up; returns µs of CPU (user + system) per call. */
function cpuPerCall(f: (i: number) => unknown): number {
  let i = 0;
  const warmUntil = performance.now() + budgetMs / 4;
  while (performance.now() < warmUntil) f(i++);
  const start = process.cpuUsage();
  const until = performance.now() + budgetMs;
  let n = 0;
  while (performance.now() < until) {
    for (let k = 0; k < 100; k++) f(i++);
    n += 100;
  }
  const cpu = process.cpuUsage(start);
  return (cpu.user + cpu.system) / n;
}

const op: UserOperationV06 = simpleAccountOp({
  factory: '0x9406Cc6185a346906296840746125a0E44976454',
  owner: '0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A',
  salt: 0n,
  sender: '0x4Fb4C5A0c8D6fB5f3E0B1bD8a2F1c2E5D6F7a8B9',
  target: '0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A',
});
const paymaster = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const key = new Uint8Array(32).fill(9);
const now = Math.floor(Date.now() / 1000);
const hashParams = (i: number) =>
  ({
    userOp: { ...op, nonce: nonceOf(i) },
    chainId: 31337n,
    paymaster,
    validUntil: now + 300,
    validAfter: now - 30,
  }) as const;

const backends: CryptoBackend[] = [loadNativeCryptoBackend(), jsCryptoBackend].filter(
  (b): b is CryptoBackend => b !== undefined,
);
console.log(
  `# signing path, µs of CPU per call (initCode ${(op.initCode.length - 2) / 2} B, callData ${(op.callData.length - 2) / 2} B), node ${process.version}`,
);
console.log(
  `${'backend'.padEnd(8)} ${'sponsoredHashV06'.padStart(17)} ${'eip191Digest'.padStart(13)} ${'signDigest'.padStart(11)} ${'hash+sign+encode'.padStart(17)}`,
);
for (const b of backends) {
  const digest = eip191Digest(sponsoredHashV06(hashParams(0), b), b);
  const hash = cpuPerCall((i) => sponsoredHashV06(hashParams(i), b));
  const eip191 = cpuPerCall(() => eip191Digest(digest, b));
  const sign = cpuPerCall(() => b.signDigest(digest, key));
  const whole = cpuPerCall((i) => {
    const p = hashParams(i);
    const signature = b.signDigest(eip191Digest(sponsoredHashV06(p, b), b), key);
    return encodeSponsoredPaymasterAndData({
      paymaster,
      validUntil: p.validUntil,
      validAfter: p.validAfter,
      signature,
    });
  });
  console.log(
    `${b.name.padEnd(8)} ${hash.toFixed(1).padStart(17)} ${eip191.toFixed(1).padStart(13)} ${sign.toFixed(1).padStart(11)} ${whole.toFixed(1).padStart(17)}`,
  );
}

// The hashes of a signature and then its userOpHash (what the ledger, the solvency guard and the request log key it
// by), as the signing pipeline makes them: each hashing the op's initCode and callData, or the second reusing the
// first's through the signature's memo (memoKeccak). Without the signing itself, whose ~40 µs would hide the gap.
console.log(`\n# sponsoredHashV06 + eip191Digest, then the userOpHash of the signed op, µs of CPU per signature`);
const signedPaymasterAndData = encodeSponsoredPaymasterAndData({
  paymaster,
  validUntil: now + 300,
  validAfter: now - 30,
  signature: new Uint8Array(65).fill(1),
});
for (const b of backends) {
  const hashes = (i: number, k: Keccak) => {
    const p = hashParams(i);
    eip191Digest(sponsoredHashV06(p, k), k);
    const userOp = { ...p.userOp, paymasterAndData: signedPaymasterAndData };
    return userOpHashV06({ userOp, entryPoint: paymaster, chainId: 31337 }, k);
  };
  const cells: string[] = [];
  // Interleaved, twice: the two differ by a few µs on the native backend.
  for (let round = 0; round < 2; round++) {
    cells.push(`each its own ${cpuPerCall((i) => hashes(i, b)).toFixed(1)}`);
    cells.push(`one memo ${cpuPerCall((i) => hashes(i, memoKeccak(b))).toFixed(1)}`);
  }
  console.log(`${b.name.padEnd(8)} ${cells.join(', ')}`);
}

// keccak256 alone: the implementations the backends could use, at the sizes the hot path hashes.
const require = createRequire(import.meta.url);
const createKeccak = require('keccak/bindings') as (algorithm: 'keccak256') => {
  update(data: Buffer): { digest(): Buffer };
};
const native = loadNativeCryptoBackend();
const keccaks: [string, (data: Buffer) => Uint8Array][] = [
  ...(native === undefined
    ? []
    : [['native, reused sponge (native backend)', native.keccak256] as [string, (data: Buffer) => Uint8Array]]),
  ['keccak package API (a stream per hash)', (data) => createKeccak('keccak256').update(data).digest()],
  ['@noble/hashes keccak_256', (data) => keccak_256(data)],
  ["viem keccak256(…, 'bytes') (js backend)", (data) => viemKeccak256(data, 'bytes')],
];
const sizes = [32, 60, 88, 132, 192, 288];
console.log(`\n# keccak256, µs of CPU per hash, by input size (bytes)`);
console.log(`${'implementation'.padEnd(42)}${sizes.map((s) => String(s).padStart(7)).join('')}`);
for (const [name, f] of keccaks) {
  const cells = sizes.map((size) => {
    const data = Buffer.alloc(size, 7);
    return cpuPerCall(() => f(data))
      .toFixed(1)
      .padStart(7);
  });
  console.log(`${name.padEnd(42)}${cells.join('')}`);
}

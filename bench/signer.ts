import { randomBytes } from 'node:crypto';
import type { Address } from 'viem';
import { selectCryptoBackend } from '../src/crypto/cryptoBackend.js';
import { eip191Digest } from '../src/paymaster/entryPoints/abiWords.js';
import {
  encodeSponsoredPaymasterAndData,
  sponsoredHashV06,
} from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { openKmsSigner } from '../src/paymaster/signer/kmsSigner.js';
import { createPaymasterSigner, type PaymasterSigner } from '../src/paymaster/signer/paymasterSigner.js';
import { openPkcs11Signer } from '../src/paymaster/signer/pkcs11Signer.js';
import { generateKey, openToken } from '../src/paymaster/signer/pkcs11Token.js';
import { startFakeKms } from '../test/helpers/fakeKms.js';
import { createSoftHsmToken } from '../test/helpers/softHsm.js';
import { nonceOf, simpleAccountOp } from './sampleOp.js';

/**
 * The paymaster signer's back ends side by side (docs/guides/signer-backends.md): a local key (the native
 * backend), PKCS#11 on SoftHSM2 (a throwaway token in a temp dir, 4 sessions) and AWS KMS through the real SDK to a
 * 127.0.0.1 stand-in (test/helpers/fakeKms.ts: the SDK's own cost plus loopback HTTP, not AWS's latency). Rounds
 * are interleaved (each back end once per round) so drift on a shared machine hits them alike; per back end the
 * min and median over rounds of: µs per signature one at a time, signatures/s with 4 in flight, and µs for the
 * sponsored request's signing step (hash → EIP-191 digest → sign → encode, as entryPointV06.signing does).
 * Usage: `npm run bench:signer [-- rounds]`.
 */
const rounds = Number(process.argv[2] ?? 5);
const crypto = selectCryptoBackend().backend;

const hsm = createSoftHsmToken('patron-bench');
const token = openToken(hsm.setting);
generateKey(token, { keyLabel: hsm.setting.keyLabel, crypto });
token.close();
const kms = await startFakeKms();
process.env.AWS_ACCESS_KEY_ID ??= 'AKIDPATRONBENCH';
process.env.AWS_SECRET_ACCESS_KEY ??= 'patron-bench-secret';

const signers: PaymasterSigner[] = [
  createPaymasterSigner({ privateKey: randomBytes(32), crypto }),
  openPkcs11Signer({ setting: hsm.setting, crypto }),
  await openKmsSigner({
    setting: { kind: 'kms', keyId: kms.createKey().keyId, region: 'eu-west-1', endpoint: kms.endpoint },
    crypto,
  }),
];

const op = simpleAccountOp({
  factory: '0x9406Cc6185a346906296840746125a0E44976454',
  owner: '0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A',
  salt: 0n,
  sender: '0x4Fb4C5A0c8D6fB5f3E0B1bD8a2F1c2E5D6F7a8B9',
  target: '0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A',
});
const paymaster: Address = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const now = Math.floor(Date.now() / 1000);

/** The sponsored request's signing step, awaiting only a Promise (as signFields.ts). */
async function signingStep(signer: PaymasterSigner, i: number): Promise<string> {
  const p = {
    userOp: { ...op, nonce: nonceOf(i) },
    chainId: 31337n,
    paymaster,
    validUntil: now + 300,
    validAfter: now,
  };
  const made = signer.sign(eip191Digest(sponsoredHashV06(p, crypto), crypto));
  const signature = made instanceof Uint8Array ? made : await made;
  return encodeSponsoredPaymasterAndData({ paymaster, validUntil: p.validUntil, validAfter: p.validAfter, signature });
}

/** µs per call, one at a time, over about `ms` milliseconds. */
async function sequential(f: (i: number) => unknown, ms: number): Promise<number> {
  const start = performance.now();
  let n = 0;
  while (performance.now() - start < ms) {
    const r = f(n++);
    if (r instanceof Promise) await r;
  }
  return ((performance.now() - start) * 1000) / n;
}

/** Signatures per second with `inFlight` requests outstanding, over about `ms` milliseconds. */
async function throughput(signer: PaymasterSigner, inFlight: number, ms: number): Promise<number> {
  const start = performance.now();
  let n = 0;
  const digest = randomBytes(32);
  const worker = async () => {
    while (performance.now() - start < ms) {
      const r = signer.sign(digest);
      if (r instanceof Promise) await r;
      n++;
      // A local key never yields: let the other workers (and the timer check) run.
      if (!(r instanceof Promise) && n % 256 === 0) await new Promise(setImmediate);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return (n * 1000) / (performance.now() - start);
}

type Row = { sign: number[]; rate: number[]; step: number[] };
const results = new Map<string, Row>(signers.map((s) => [s.backend, { sign: [], rate: [], step: [] }]));
for (const s of signers) await sequential((i) => (i < 50 ? s.sign(randomBytes(32)) : undefined), 200); // warm-up
for (let r = 0; r < rounds; r++) {
  for (const s of signers) {
    const row = results.get(s.backend);
    if (row === undefined) continue;
    const digest = randomBytes(32);
    row.sign.push(await sequential(() => s.sign(digest), 700));
    row.rate.push(await throughput(s, 4, 700));
    row.step.push(await sequential((i) => signingStep(s, i), 700));
  }
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const min = (xs: number[]) => sorted(xs)[0] ?? Number.NaN;
const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)] ?? Number.NaN;
const maxOf = (xs: number[]) => sorted(xs).at(-1) ?? Number.NaN;
console.log(
  `# paymaster signer back ends, ${rounds} interleaved rounds, node ${process.version}, ${crypto.name} secp256k1`,
);
console.log(
  `${'back end'.padEnd(10)} ${'µs/sig min'.padStart(11)} ${'median'.padStart(8)} ${'sig/s 1 in flight'.padStart(18)} ${'sig/s 4 in flight (max, median)'.padStart(32)} ${'signing step µs (min, median)'.padStart(30)}`,
);
for (const [name, row] of results) {
  console.log(
    `${name.padEnd(10)} ${min(row.sign).toFixed(1).padStart(11)} ${median(row.sign).toFixed(1).padStart(8)} ${(1e6 / median(row.sign)).toFixed(0).padStart(18)} ${`${maxOf(row.rate).toFixed(0)}, ${median(row.rate).toFixed(0)}`.padStart(32)} ${`${min(row.step).toFixed(1)}, ${median(row.step).toFixed(1)}`.padStart(30)}`,
  );
}
for (const s of signers) await s.close();
await kms.close();
hsm.close();

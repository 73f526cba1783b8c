import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyBodyParser, LogController } from 'fastify';
import type { Address, Hex } from 'viem';
import { selectCryptoBackend } from '../src/crypto/cryptoBackend.js';
import { createLogger, lazyChildLoggerFactory } from '../src/logger.js';
import { eip191Digest } from '../src/paymaster/entryPoints/abiWords.js';
import { MODE_SPONSORED } from '../src/paymaster/entryPoints/paymasterModes.js';
import {
  encodeSponsoredPaymasterAndData,
  sponsoredHashV06,
  type UserOperationV06,
} from '../src/paymaster/entryPoints/v06/patronPaymasterV06.js';
import { sponsoredHashV07 } from '../src/paymaster/entryPoints/v07/hashesV07.js';
import {
  encodePaymasterAndDataV07,
  exactCapsV07,
  type HashedFieldsV07,
} from '../src/paymaster/entryPoints/v07/patronPaymasterV07.js';

/**
 * The ceiling of the sponsorship benchmark, as its own child process: a server that reads the body,
 * JSON.parses it, hashes and signs the op with Patron's own signing code (sponsoredHashV06 + eip191Digest +
 * the selected CryptoBackend's signDigest + encodeSponsoredPaymasterAndData) and answers the same result shape.
 * No validation, no API key, no webhook, no logging: what signing alone allows.
 * argv: chainId paymaster [http|fastify] [0.6|0.7|0.8]. `http` (default) is a bare node:http server; `fastify` serves
 * the same handler through Fastify configured as Patron's app is (its logger, request ids, no request log lines for
 * the route), which separates the framework's share from Patron's own. The version (default 0.6) picks the body
 * and codec: 0.6 reads the Biconomy dialect's `[op, mode]`; 0.7 and 0.8 read ERC-7677's `pm_getPaymasterData`
 * `[op, entryPoint, chainId, context]` and sign with PatronPaymasterV07's codec (sponsoredHashV07 over caps equal
 * to the op's limits, as Patron signs a data call whose limits are given), answering ERC-7677's fields. v0.7 and
 * v0.8 run the same paymaster digest; only the EntryPoint in it (from the body) differs. IPC: sends {url,
 * backend}; answers 'cpu' with process.cpuUsage(); exits on 'stop'.
 */
const chainId = BigInt(process.argv[2] ?? '31337');
const paymaster = (process.argv[3] ?? '0x0000000000000000000000000000000000000001') as Address;
const server = process.argv[4] ?? 'http';
const version = process.argv[5] ?? '0.6';
if (version !== '0.6' && version !== '0.7' && version !== '0.8') throw new Error(`unknown version ${version}`);
const { backend } = selectCryptoBackend();
const key = new Uint8Array(randomBytes(32));

interface WireOp {
  sender: Address;
  nonce: string;
  initCode: Hex;
  callData: Hex;
  callGasLimit: string;
  verificationGasLimit: string;
  preVerificationGas: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
}

function sponsor(body: string): string {
  const req = JSON.parse(body) as { id: number; params: [WireOp, unknown] };
  const w = req.params[0];
  const userOp: UserOperationV06 = {
    sender: w.sender,
    nonce: BigInt(w.nonce),
    initCode: w.initCode,
    callData: w.callData,
    callGasLimit: BigInt(w.callGasLimit),
    verificationGasLimit: BigInt(w.verificationGasLimit),
    preVerificationGas: BigInt(w.preVerificationGas),
    maxFeePerGas: BigInt(w.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(w.maxPriorityFeePerGas),
    paymasterAndData: '0x',
    signature: '0x',
  };
  const now = Math.floor(Date.now() / 1000);
  const validUntil = now + 300;
  const validAfter = now - 30;
  const hash = sponsoredHashV06({ userOp, chainId, paymaster, validUntil, validAfter }, backend);
  const signature = backend.signDigest(eip191Digest(hash, backend), key);
  const paymasterAndData = encodeSponsoredPaymasterAndData({ paymaster, validUntil, validAfter, signature });
  return JSON.stringify({
    jsonrpc: '2.0',
    id: req.id,
    result: {
      mode: 'SPONSORED',
      MODE: 'SPONSORED',
      paymasterAndData,
      preVerificationGas: userOp.preVerificationGas.toString(10),
      verificationGasLimit: Number(userOp.verificationGasLimit),
      callGasLimit: Number(userOp.callGasLimit),
    },
  });
}

/** An ERC-7677 data call's op (v0.7+): hex quantities, factory + factoryData, the stub's paymaster fields. */
interface WireOpV07 {
  sender: Address;
  nonce: string;
  factory?: Address;
  factoryData?: Hex;
  callData: Hex;
  callGasLimit: string;
  verificationGasLimit: string;
  preVerificationGas: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  paymasterVerificationGasLimit: string;
  paymasterPostOpGasLimit: string;
}

const hex = (n: bigint): string => `0x${n.toString(16)}`;

function sponsorV07(body: string): string {
  const req = JSON.parse(body) as { id: number; params: [WireOpV07, Address, string, unknown] };
  const [w, entryPoint] = req.params;
  const userOp: HashedFieldsV07 = {
    sender: w.sender,
    nonce: BigInt(w.nonce),
    initCode: w.factory === undefined ? '0x' : `${w.factory}${(w.factoryData ?? '0x').slice(2)}`,
    callData: w.callData,
    maxFeePerGas: BigInt(w.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(w.maxPriorityFeePerGas),
    paymasterVerificationGasLimit: BigInt(w.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: BigInt(w.paymasterPostOpGasLimit),
  };
  const caps = exactCapsV07({
    verificationGasLimit: BigInt(w.verificationGasLimit),
    callGasLimit: BigInt(w.callGasLimit),
    preVerificationGas: BigInt(w.preVerificationGas),
  });
  const now = Math.floor(Date.now() / 1000);
  const validUntil = now + 300;
  const validAfter = now - 30;
  const hash = sponsoredHashV07({ userOp, chainId, paymaster, entryPoint, validUntil, validAfter, caps }, backend);
  const signature = backend.signDigest(eip191Digest(hash, backend), key);
  const paymasterAndData = encodePaymasterAndDataV07({
    paymaster,
    paymasterVerificationGasLimit: userOp.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: userOp.paymasterPostOpGasLimit,
    fields: { mode: MODE_SPONSORED },
    validUntil,
    validAfter,
    caps,
    signature,
  });
  return JSON.stringify({
    jsonrpc: '2.0',
    id: req.id,
    result: {
      paymaster,
      // ERC-7677 splits paymasterAndData after the paymaster (20 bytes) and its two uint128 gas limits.
      paymasterData: `0x${paymasterAndData.slice(2 + 52 * 2)}`,
      paymasterVerificationGasLimit: hex(userOp.paymasterVerificationGasLimit),
      paymasterPostOpGasLimit: hex(userOp.paymasterPostOpGasLimit),
    },
  });
}

const handle = version === '0.6' ? sponsor : sponsorV07;

async function listenHttp(): Promise<number> {
  const s = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let out: string;
      try {
        out = handle(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(out);
    });
  });
  s.keepAliveTimeout = 72_000;
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return (s.address() as AddressInfo).port;
}

async function listenFastify(): Promise<number> {
  const app = Fastify({
    loggerInstance: createLogger({ level: process.env.LOG_LEVEL ?? 'info' }),
    genReqId: () => randomUUID(),
    childLoggerFactory: lazyChildLoggerFactory,
    logController: new LogController({ disableRequestLogging: true }),
  });
  app.removeAllContentTypeParsers();
  const asText: FastifyBodyParser<string> = (_req, body, done) => done(null, body);
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 512 * 1024 }, asText);
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: 512 * 1024 }, asText);
  app.post('/api/v1/:chainId/:apiKey', async (req, reply) =>
    reply.header('content-type', 'application/json; charset=utf-8').send(handle(String(req.body))),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as AddressInfo).port;
}

const port = server === 'fastify' ? await listenFastify() : await listenHttp();
process.send?.({ url: `http://127.0.0.1:${port}/api/v1/${chainId}/pk.ceiling`, backend: backend.name });
process.on('message', (msg) => {
  if (msg === 'cpu') process.send?.({ cpu: process.cpuUsage() });
  if (msg === 'stop') process.exit(0);
});

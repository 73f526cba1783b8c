import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyBodyParser, LogController } from 'fastify';
import type { Address, Hex } from 'viem';
import { createLogger, lazyChildLoggerFactory } from '../src/logger.js';
import { selectCryptoBackend } from '../src/paymaster/cryptoBackend.js';
import {
  eip191Digest,
  encodeSponsoredPaymasterAndData,
  sponsoredHashV06,
  type UserOperationV06,
} from '../src/paymaster/patronPaymasterV06.js';

/**
 * The ceiling of the sponsorship benchmark, as its own child process: a server that reads the body,
 * JSON.parses it, hashes and signs the op with Patron's own signing code (sponsoredHashV06 + eip191Digest +
 * the selected CryptoBackend's signDigest + encodeSponsoredPaymasterAndData) and answers the same result shape.
 * No validation, no API key, no webhook, no logging: what signing alone allows.
 * argv: chainId paymaster [http|fastify]. `http` (default) is a bare node:http server; `fastify` serves the same
 * handler through Fastify configured as Patron's app is (its logger, request ids, no request log lines for the
 * route), which separates the framework's share from Patron's own. IPC: sends {url, backend}; answers 'cpu'
 * with process.cpuUsage(); exits on 'stop'.
 */
const chainId = BigInt(process.argv[2] ?? '31337');
const paymaster = (process.argv[3] ?? '0x0000000000000000000000000000000000000001') as Address;
const server = process.argv[4] ?? 'http';
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

async function listenHttp(): Promise<number> {
  const s = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let out: string;
      try {
        out = sponsor(Buffer.concat(chunks).toString('utf8'));
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
    reply.header('content-type', 'application/json; charset=utf-8').send(sponsor(String(req.body))),
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

import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Address, type Hex, isAddress, isHex } from 'viem';
import { z } from 'zod';
import { buildMeeQuote, type MeeOpGas } from './meeQuote.js';
import type { MeeQuote } from './meeQuoteWire.js';

/**
 * A stand-in MEE node on 127.0.0.1 answering what abstractjs 1.2.3 asks a node for a sponsored quote:
 * `GET {url}/info` (createMeeClient → getInfo) and `POST {url}/quote` (getQuote), `url` ending in `/v1`. The answer is
 * built by buildMeeQuote from the request's own userOps and paymentInfo (the payment op's nonce is the one the SDK
 * got from the sponsor's nonce endpoint), so the quote is the one a real node would hash and sign for those ops;
 * `mutate` corrupts it for attack tests. Anything else gets 404, and every request is recorded.
 */
export interface MeeNodeRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface MeeNodeOptions {
  chains: readonly { id: number; name: string }[];
  nodeAddress: Address;
  /** The node's paymaster on every chain (the same CREATE2 address); a fixed one by default. */
  nodePaymaster?: Address;
  /** Token base units charged per unit of the ops' summed maxGasLimit (all ops, payment op included). */
  tokenWeiPerGas?: bigint;
  /** Gas the node "simulated", for the payment op and for the user's ops. */
  paymentGas?: MeeOpGas;
  userOpGas?: MeeOpGas;
  tokenDecimals?: number;
  mutate?: (quote: MeeQuote) => MeeQuote;
}

export interface MeeNode {
  /** What to give createMeeClient({ url }). */
  url: string;
  requests: MeeNodeRequest[];
  quotes: MeeQuote[];
  close(): Promise<void>;
}

const DEFAULT_NODE_PAYMASTER: Address = '0x000000000000000000000000000000000000bb0c';

const hex = z.string().refine((s): s is Hex => isHex(s), 'hex');
const address = z.string().refine((s): s is Address => isAddress(s, { strict: false }), 'address');
const decimal = z.string().regex(/^\d+$/);

/** The parts of abstractjs getQuote's request body (`quoteRequest` in getQuote.js) that the node's answer uses. */
const quoteRequestSchema = z.object({
  quoteType: z.literal('simple'),
  userOps: z
    .array(
      z.object({
        sender: address,
        callData: hex,
        callGasLimit: decimal,
        nonce: decimal,
        chainId: decimal,
        lowerBoundTimestamp: z.number().int(),
        upperBoundTimestamp: z.number().int(),
        initCode: hex.optional(),
        verificationGasLimit: decimal.optional(),
        shortEncoding: z.boolean().optional(),
        isCleanUpUserOp: z.boolean().optional(),
      }),
    )
    .min(1),
  paymentInfo: z.object({
    sponsored: z.literal(true),
    sender: address,
    token: address,
    nonce: decimal,
    chainId: decimal,
    callGasLimit: decimal,
    verificationGasLimit: decimal,
    sponsorshipUrl: z.string(),
  }),
});
export type MeeQuoteRequest = z.infer<typeof quoteRequestSchema>;

function answerQuote(args: { request: MeeQuoteRequest; options: MeeNodeOptions }): MeeQuote {
  const { request, options } = args;
  const [first] = request.userOps;
  if (first === undefined) throw new Error('no user ops');
  const build = (tokenWeiAmount: bigint) =>
    buildMeeQuote({
      node: options.nodeAddress,
      nodePaymaster: options.nodePaymaster ?? DEFAULT_NODE_PAYMASTER,
      payment: {
        ...options.paymentGas,
        callGasLimit: options.paymentGas?.callGasLimit ?? BigInt(request.paymentInfo.callGasLimit),
        chainId: Number(request.paymentInfo.chainId),
        tank: request.paymentInfo.sender,
        token: request.paymentInfo.token,
        nonce: BigInt(request.paymentInfo.nonce),
        tokenWeiAmount,
        sponsorshipUrl: request.paymentInfo.sponsorshipUrl,
        ...(options.tokenDecimals === undefined ? {} : { tokenDecimals: options.tokenDecimals }),
      },
      userOps: request.userOps.map((op) => ({
        ...options.userOpGas,
        callGasLimit: BigInt(op.callGasLimit),
        ...(op.verificationGasLimit === undefined ? {} : { verificationGasLimit: BigInt(op.verificationGasLimit) }),
        chainId: Number(op.chainId),
        sender: op.sender,
        nonce: BigInt(op.nonce),
        callData: op.callData,
        ...(op.initCode === undefined ? {} : { initCode: op.initCode }),
        lowerBound: op.lowerBoundTimestamp,
        upperBound: op.upperBoundTimestamp,
        ...(op.shortEncoding === undefined ? {} : { shortEncoding: op.shortEncoding }),
        ...(op.isCleanUpUserOp === undefined ? {} : { isCleanUpUserOp: op.isCleanUpUserOp }),
      })),
      // The payment op shares the window of the first user op (the SDK's quote-wide bounds).
      lowerBound: first.lowerBoundTimestamp,
      upperBound: first.upperBoundTimestamp,
    });
  // The price covers every op's gas, the payment op's included; its amount does not change the gas fields.
  const totalGas = build(0n).userOps.reduce((sum, op) => sum + BigInt(op.maxGasLimit), 0n);
  return build(totalGas * (options.tokenWeiPerGas ?? 10n));
}

function info(options: MeeNodeOptions) {
  return {
    version: '2.0.0',
    node: options.nodeAddress,
    supportedChains: options.chains.map((c) => ({ chainId: String(c.id), name: c.name })),
    supportedGasTokens: options.chains.map((c) => ({
      chainId: String(c.id),
      paymentTokens: [],
      isArbitraryFeeTokensSupported: false,
    })),
    supported_wallet_providers: [],
  };
}

async function readBody(req: AsyncIterable<Buffer>): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

export async function startMeeNode(options: MeeNodeOptions): Promise<MeeNode> {
  const requests: MeeNodeRequest[] = [];
  const quotes: MeeQuote[] = [];
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    void (async () => {
      const body = await readBody(req);
      const path = req.url ?? '';
      requests.push({ method: req.method ?? '', path, headers: req.headers, body });
      if (req.method === 'GET' && path === '/v1/info') return send(200, info(options));
      if (req.method === 'POST' && path === '/v1/quote') {
        const parsed = quoteRequestSchema.safeParse(body);
        if (!parsed.success) return send(400, { errors: parsed.error.issues.map((i) => i.message) });
        const built = answerQuote({ request: parsed.data, options });
        const quote = options.mutate ? options.mutate(built) : built;
        quotes.push(quote);
        return send(200, quote);
      }
      return send(404, { errors: [`stand-in MEE node: no route ${req.method} ${path}`] });
    })().catch((error: unknown) => send(500, { errors: [String(error)] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    quotes,
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}

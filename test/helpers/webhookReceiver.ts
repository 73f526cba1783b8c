import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyStandardWebhookSignature } from '../../src/webhooks/webhookCaller.js';

/**
 * A real webhook receiver for tests: a node:http server on 127.0.0.1 (random port) that records every request
 * and counts TCP connections. Tests swap `handler` to make it answer as a dApp's webhook would, or misbehave.
 */
export interface ReceivedRequest {
  readonly method: string;
  /** The request target as sent: path and raw query string. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export type ReceiverHandler = (req: ReceivedRequest, res: ServerResponse) => void | Promise<void>;

export interface Receiver {
  readonly port: number;
  /** `http://127.0.0.1:<port><path>`. */
  url(path?: string): string;
  readonly requests: ReceivedRequest[];
  /** TCP connections accepted so far. */
  connections(): number;
  /** TCP connections accepted and not yet closed. */
  openConnections(): number;
  handler: ReceiverHandler;
  close(): Promise<void>;
}

/** Answers with a JSON body (or a raw string) and a status. */
export const answer =
  (body: unknown, status = 200, contentType = 'application/json'): ReceiverHandler =>
  (_req, res) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

export const verifiedAnswer = answer({ arePoliciesVerified: true });

export async function startReceiver(
  handler: ReceiverHandler = verifiedAnswer,
  host = '127.0.0.1',
  port = 0,
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let connections = 0;
  let open = 0;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const received: ReceivedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    requests.push(received);
    try {
      await receiver.handler(received, res);
    } catch {
      res.destroy();
    }
  });
  server.on('connection', (socket) => {
    connections += 1;
    open += 1;
    socket.once('close', () => {
      open -= 1;
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const receiver: Receiver = {
    port: bound,
    url: (path = '/hook') => `http://${host}:${bound}${path}`,
    requests,
    connections: () => connections,
    openConnections: () => open,
    handler,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

/** A port on 127.0.0.1 with nothing listening: bound once, then released. */
export async function closedPort(): Promise<number> {
  const r = await startReceiver();
  await r.close();
  return r.port;
}

/**
 * Whether a received call carries a valid Standard Webhooks signature for `secret` (false when nothing came).
 * `now`: the clock its age is judged by (a test that moves the service's clock checks the signature, not its age).
 */
export const signedWith = (secret: string, r: ReceivedRequest | undefined, now?: () => number): boolean =>
  r !== undefined &&
  verifyStandardWebhookSignature({
    secret,
    id: String(r.headers['webhook-id']),
    timestamp: String(r.headers['webhook-timestamp']),
    body: r.body,
    signature: String(r.headers['webhook-signature']),
    ...(now === undefined ? {} : { now }),
  });

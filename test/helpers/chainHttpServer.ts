import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmbeddedChain } from '../../src/chain/embeddedChain.js';

/**
 * The embedded chain served over HTTP JSON-RPC on 127.0.0.1, for a bundler process (alto) in tests that do not
 * run Patron's own /chain/{id} route. Single and batch requests; an error keeps its code, message and data.
 */
export interface ChainHttpServer {
  readonly url: string;
  close(): Promise<void>;
}

interface JsonRpcRequest {
  readonly id?: unknown;
  readonly method: string;
  readonly params?: readonly unknown[];
}

export async function serveChainOverHttp(chain: EmbeddedChain): Promise<ChainHttpServer> {
  const answer = async (msg: JsonRpcRequest) => {
    try {
      return {
        jsonrpc: '2.0',
        id: msg.id ?? null,
        result: await chain.request({ method: msg.method, params: msg.params ?? [] }),
      };
    } catch (err) {
      const { code, message, data } = err as { code?: unknown; message?: unknown; data?: unknown };
      const error = {
        code: typeof code === 'number' ? code : -32603,
        message: String(message),
        ...(data === undefined ? {} : { data }),
      };
      return { jsonrpc: '2.0', id: msg.id ?? null, error };
    }
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    req.on('end', () => {
      void (async () => {
        const parsed = JSON.parse(body) as JsonRpcRequest | JsonRpcRequest[];
        const out = Array.isArray(parsed) ? await Promise.all(parsed.map(answer)) : await answer(parsed);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(out));
      })().catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A client that keeps its connection open (EDR forking this chain pools them) would hold close() until the
        // connection times out: measured 37 s.
        server.closeAllConnections();
      }),
  };
}

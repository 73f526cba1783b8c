import { createServer } from 'node:net';

/**
 * Whether a server can listen on `port` on every IPv4 address, as alto does (its host is hard-coded to 0.0.0.0);
 * Linux refuses that while anything listens on 127.0.0.1 at that port too.
 */
export async function portIsFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen({ port, host: '0.0.0.0', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port the system has free now, for a bundler whose Patron listens on an ephemeral port (PORT=0). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '0.0.0.0' }, resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port assigned');
  return address.port;
}

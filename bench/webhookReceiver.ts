import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A dApp's webhook for the sponsorship benchmark, as its own child process (so its CPU is neither the
 * service's nor the load generator's): a node:http server that reads the body and answers
 * `{"arePoliciesVerified":true}`. IPC: sends {url}; answers 'count' with the calls received; exits on 'stop'.
 */
const answer = JSON.stringify({ arePoliciesVerified: true });
let calls = 0;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    calls++;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }).end(answer);
  });
});
server.keepAliveTimeout = 72_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ url: `http://127.0.0.1:${port}/verify` });
});
process.on('message', (msg) => {
  if (msg === 'count') process.send?.({ calls });
  if (msg === 'stop') {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});

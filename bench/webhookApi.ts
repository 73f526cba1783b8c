import { fork } from 'node:child_process';
import { once } from 'node:events';
import autocannon from 'autocannon';

/**
 * Benchmark of the webhook management API: the authenticated read path (token + API key lookups through the
 * cache, one query) and a write path (PATCH toggling `active`, one transaction). Prints req/s, p50, p99 and
 * the server's CPU time per request. Usage: `npx tsx bench/webhookApi.ts [seconds]` (DATABASE_URL for PG).
 */
const seconds = Number(process.argv[2] ?? 10);
const connections = 50;

interface Ready {
  url: string;
  authToken: string;
  apiKey: string;
  storage: string;
}

const server = fork(new URL('./benchServer.ts', import.meta.url), { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
const [ready] = (await once(server, 'message')) as [Ready];
const headers = { authToken: ready.authToken, apiKey: ready.apiKey, 'content-type': 'application/json' };

const created = await fetch(`${ready.url}/api/v2/public/sdk/webhookParameters`, {
  method: 'POST',
  headers,
  body: JSON.stringify({ webhookUrl: 'http://127.0.0.1:4000/hook', requestType: 'POST' }),
});
const { data } = (await created.json()) as { data: { webhookId: string } };

async function cpuMicros(): Promise<number> {
  server.send('cpu');
  const [msg] = (await once(server, 'message')) as [{ cpu: NodeJS.CpuUsage }];
  return msg.cpu.user + msg.cpu.system;
}

async function run(name: string, opts: { method: 'GET' | 'PATCH'; path: string; body?: string }) {
  const before = await cpuMicros();
  const result = await autocannon({
    url: `${ready.url}${opts.path}`,
    method: opts.method,
    headers,
    ...(opts.body === undefined ? {} : { body: opts.body }),
    connections,
    duration: seconds,
  });
  const cpu = (await cpuMicros()) - before;
  const total = result.requests.total;
  const non2xx = result.non2xx + result.errors;
  console.log(
    `${name.padEnd(44)} ${String(Math.round(result.requests.average)).padStart(7)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms  CPU ${(cpu / total).toFixed(0)} µs/req  (${total} requests, ${non2xx} failed)`,
  );
}

console.log(`# webhook management API, ${connections} connections, ${seconds} s each, storage ${ready.storage}`);
await run('GET webhookParameters?webhookId', {
  method: 'GET',
  path: `/api/v2/public/sdk/webhookParameters?webhookId=${data.webhookId}`,
});
await run('PATCH webhookParameters (toggle active)', {
  method: 'PATCH',
  path: '/api/v2/public/sdk/webhookParameters',
  body: JSON.stringify({ webhookId: data.webhookId, active: false }),
});
await run('GET /healthz (framework floor)', { method: 'GET', path: '/healthz' });
server.send('stop');
await once(server, 'exit');

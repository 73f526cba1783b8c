import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keccak256, parseEther, stringToHex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { startDevChain } from '../src/chain/embeddedChain.js';
import { serveChainOverHttp } from '../test/helpers/chainHttpServer.js';
import { spawnService } from '../test/helpers/serviceProcess.js';

/**
 * Fork mode's start-up cost (docs/guides/fork-mode.md): the dev chain forked from a chain served on 127.0.0.1
 * against the plain dev chain. Prints the median of `startDevChain` in this process (N runs each, N from argv, 5 by
 * default), then `npm start`-equivalent (src/main.ts) to its banner with the dev bundler ready, once each.
 * A remote endpoint adds its round trips: every account and slot the set-up touches is one request the first time.
 */
const runs = Number(process.argv[2] ?? 5);
const key = (label: string) => keccak256(stringToHex(`patron-bench-fork-${label}`));
const base = {
  signerAddress: privateKeyToAddress(key('signer')),
  ownerPrivateKey: key('owner'),
  depositWei: parseEther('1000'),
} as const;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

const remote = await startDevChain({ ...base, chainId: 4545 });
const served = await serveChainOverHttp(remote.chain);
const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-bench-fork-'));

const plain: number[] = [];
const forked: number[] = [];
for (let i = 0; i < runs; i++) {
  let t = performance.now();
  await (await startDevChain(base)).close();
  plain.push(performance.now() - t);
  t = performance.now();
  const fork = { url: served.url, blockNumber: undefined, httpHeaders: {}, cacheDir: path.join(cache, String(i)) };
  await (await startDevChain({ ...base, fork })).close();
  forked.push(performance.now() - t);
}
console.log(
  `startDevChain, median of ${runs}: plain ${median(plain).toFixed(0)} ms, fork ${median(forked).toFixed(0)} ms`,
);

async function timeToReady(env: Record<string, string>): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'patron-bench-fork-start-'));
  const t = performance.now();
  const service = spawnService({ PATRON_DATA_DIR: dataDir, ...env });
  try {
    for (;;) {
      const out = service.output();
      if (out.includes('Patron is running at') && out.includes('the dev bundler is ready')) break;
      if (service.child.exitCode !== null) throw new Error(out);
      await new Promise((r) => setTimeout(r, 20));
    }
    return performance.now() - t;
  } finally {
    await service.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
const plainStart = await timeToReady({});
const forkStart = await timeToReady({ PATRON_DEV_CHAIN_FORK_URL: served.url });
console.log(
  `src/main.ts to its banner with the dev bundler ready: plain ${plainStart.toFixed(0)} ms, fork ${forkStart.toFixed(0)} ms`,
);

await served.close();
await remote.close();
fs.rmSync(cache, { recursive: true, force: true });

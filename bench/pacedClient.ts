import { pacedLoad } from './pacedLoad.js';
import { type BodyParts, bodyFromParts } from './sampleOp.js';

/**
 * The paced (open-loop) load generator as a child process of its own. In the benchmark's main process its
 * schedule was held up by that process's own work (autocannon's histograms and the response-time arrays of the
 * saturated runs, their garbage collection): requests sent late are charged to the server from their scheduled
 * time, so the generator's pauses showed up as the server's p99. A small process of its own keeps the
 * schedule, and reports how late it sent (PacedResult.sendLagP99) so that can be checked.
 *
 * IPC: receives a PacedRun, answers with the PacedResult, once per message; exits on 'stop'.
 */
export interface PacedRun {
  readonly url: string;
  readonly body: BodyParts;
  readonly firstNonce: number;
  readonly rate: number;
  readonly seconds: number;
  readonly connections: number;
  readonly warmupSeconds: number;
}

process.on('message', (msg: PacedRun | 'stop') => {
  if (msg === 'stop') process.exit(0);
  const body = bodyFromParts(msg.body);
  void pacedLoad({ ...msg, body: (i) => body(msg.firstNonce + i) }).then((result) => process.send?.(result));
});
process.send?.('ready');

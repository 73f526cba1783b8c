import cluster, { type Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue, type Registry } from 'prom-client';
import { isPatronMessage } from '../ipcMessage.js';
import type { PatronMetrics } from './patronMetrics.js';

/**
 * One scrape of a `PATRON_WORKERS` service reports the whole service (docs/reference/metrics.md, "Metrics"). A scrape reaches one
 * worker (they share the port); that worker asks the primary, which collects every live worker's registry over the
 * cluster's IPC channel and aggregates them with prom-client's rules: counters and histograms summed, each gauge
 * by the `aggregator` it declares (patronMetrics.ts). Counters never go backwards between scrapes: when a worker
 * exits, the primary keeps the counters and histograms of its last collection and adds them to every later
 * aggregate (a replaced worker starts again from 0).
 */

type Snapshot = MetricObjectWithValues<MetricValue<string>>[];

type ToPrimary =
  | { readonly patron: 'metricsScrape'; readonly id: string }
  | { readonly patron: 'metricsSnapshot'; readonly id: string; readonly snapshot: Snapshot };
type ToWorker =
  | { readonly patron: 'metricsCollect'; readonly id: string }
  | { readonly patron: 'metricsAggregate'; readonly id: string; readonly body?: string; readonly error?: string };

/** How long the primary waits for a worker's registry before it uses the last one it had. */
const COLLECT_TIMEOUT_MS = 2000;
/** How long a worker waits for the primary's aggregate before the scrape fails. */
const SCRAPE_TIMEOUT_MS = 5000;

/** In a worker: the metrics whose render() is the whole service's, and which answer the primary's collections. */
export function clusterWorkerMetrics(metrics: PatronMetrics): PatronMetrics {
  const pending = new Map<string, { resolve: (body: string) => void; reject: (err: Error) => void }>();
  process.on('message', (message: unknown) => {
    if (!isPatronMessage<ToWorker>(message, ['metricsCollect', 'metricsAggregate'])) return;
    if (message.patron === 'metricsCollect') {
      void metrics.registry.getMetricsAsJSON().then((snapshot) => {
        const reply: ToPrimary = { patron: 'metricsSnapshot', id: message.id, snapshot: snapshot as Snapshot };
        process.send?.(reply);
      });
      return;
    }
    const waiting = pending.get(message.id);
    pending.delete(message.id);
    if (message.body !== undefined) waiting?.resolve(message.body);
    else waiting?.reject(new Error(message.error ?? 'the primary did not aggregate the metrics'));
  });
  return {
    ...metrics,
    render: () =>
      new Promise((resolve, reject) => {
        const id = randomUUID();
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error('the primary did not answer the metrics scrape in time'));
        }, SCRAPE_TIMEOUT_MS);
        pending.set(id, {
          resolve: (body) => {
            clearTimeout(timer);
            resolve({ contentType: metrics.registry.contentType, body });
          },
          reject: (err) => {
            clearTimeout(timer);
            reject(err);
          },
        });
        const ask: ToPrimary = { patron: 'metricsScrape', id };
        process.send?.(ask);
      }),
  };
}

/** In the primary: answers its workers' scrapes with the aggregate of them all (see the file's comment). */
export function servePrimaryMetrics(): void {
  const last = new Map<number, Snapshot>();
  /**
   * The counters and histograms of workers that exited, as of their last collection, merged into one snapshot (so it
   * holds one entry per metric however many workers come and go); a promise, so a scrape that follows an exit
   * waits for its merge.
   */
  let retired: Promise<Snapshot> = Promise.resolve([]);
  const collecting = new Map<string, { readonly want: Set<number>; readonly done: () => void }>();

  const collect = async (): Promise<void> => {
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w?.isConnected() === true);
    const id = randomUUID();
    await new Promise<void>((resolve) => {
      const want = new Set(workers.map((w) => w.id));
      const timer = setTimeout(finish, COLLECT_TIMEOUT_MS);
      function finish() {
        clearTimeout(timer);
        collecting.delete(id);
        resolve();
      }
      collecting.set(id, { want, done: finish });
      if (want.size === 0) finish();
      for (const w of workers) {
        const ask: ToWorker = { patron: 'metricsCollect', id };
        w.send(ask);
      }
    });
  };

  const aggregate = async (): Promise<string> => {
    await collect();
    const registry: Registry = AggregatorRegistry.aggregate([...last.values(), await retired]);
    return registry.metrics();
  };

  cluster.on('message', (worker: Worker, message: unknown) => {
    if (!isPatronMessage<ToPrimary>(message, ['metricsScrape', 'metricsSnapshot'])) return;
    if (message.patron === 'metricsSnapshot') {
      last.set(worker.id, message.snapshot);
      const c = collecting.get(message.id);
      c?.want.delete(worker.id);
      if (c !== undefined && c.want.size === 0) c.done();
      return;
    }
    aggregate().then(
      (body) => {
        const reply: ToWorker = { patron: 'metricsAggregate', id: message.id, body };
        if (worker.isConnected()) worker.send(reply);
      },
      (err: unknown) => {
        const reply: ToWorker = { patron: 'metricsAggregate', id: message.id, error: String(err) };
        if (worker.isConnected()) worker.send(reply);
      },
    );
  });
  cluster.on('exit', (worker: Worker) => {
    const snapshot = last.get(worker.id);
    last.delete(worker.id);
    if (snapshot === undefined) return;
    // prom-client's JSON carries the type as a string ('counter', …), whatever its typings' enum says.
    const kept = snapshot.filter((m) => ['counter', 'histogram'].includes(String(m.type)));
    retired = retired.then(
      async (before) => (await AggregatorRegistry.aggregate([before, kept]).getMetricsAsJSON()) as Snapshot,
    );
  });
}

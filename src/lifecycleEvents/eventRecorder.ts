import { randomUUID } from 'node:crypto';
import type { EventEndpointRepository } from '../store/events/eventEndpointRepository.js';
import type { LifecycleEventRepository, NewLifecycleEvent } from '../store/events/lifecycleEventRepository.js';

/** What `build` makes of a pending event: its type, op key, body data and the outbox's optional columns. */
export interface BuiltEvent extends Pick<NewLifecycleEvent, 'dedupeKey' | 'ref' | 'block'> {
  readonly type: string;
  readonly opKey: string;
  readonly data: Record<string, unknown>;
}

/** An event as an emitter hands it over: its dApp now, the rest built later, off the caller's path. */
export interface PendingEvent {
  readonly dappId: string;
  readonly at: number;
  readonly build: () => BuiltEvent;
}

/**
 * The outbox's writer (store/events/lifecycleEventRepository.ts). `record` is an append to an in-memory queue, the only
 * thing the sponsorship path pays (no database round trip, no hashing: the event's op key and body are built by
 * `build` at flush time); a background flush every `flushMs` writes the queue in one statement, dropping the events
 * of dApps that have no active endpoint (nothing would receive them). What a crash loses: the events recorded since
 * the last flush (at most `flushMs` of them), as the request log loses its unflushed entries. A queue past `maxQueue`
 * drops the newest (counted in `dropped`, logged): a database that cannot keep up must not grow the heap.
 */
export interface EventRecorder {
  record(event: PendingEvent): void;
  flush(): Promise<void>;
  readonly dropped: () => number;
  close(): Promise<void>;
}

export function createEventRecorder(deps: {
  readonly events: LifecycleEventRepository;
  readonly endpoints: EventEndpointRepository;
  readonly logger: { warn(obj: object, msg: string): void };
  readonly flushMs: number;
  readonly maxQueue: number;
  /** Called after a flush wrote events (the deliverer's wake-up). */
  readonly onWritten?: (() => void) | undefined;
}): EventRecorder {
  let queue: PendingEvent[] = [];
  let dropped = 0;
  let flushing: Promise<void> = Promise.resolve();

  async function write(batch: readonly PendingEvent[]): Promise<void> {
    const active = new Map<string, Promise<boolean>>();
    const hasEndpoint = (dappId: string) => {
      let found = active.get(dappId);
      if (found === undefined) {
        found = deps.endpoints.findSealed(dappId).then((e) => e?.active === true);
        active.set(dappId, found);
      }
      return found;
    };
    const rows: NewLifecycleEvent[] = [];
    for (const e of batch) {
      if (!(await hasEndpoint(e.dappId))) continue;
      const built = e.build();
      rows.push({
        id: `evt_${randomUUID()}`,
        dappId: e.dappId,
        type: built.type,
        opKey: built.opKey,
        payload: JSON.stringify({ type: built.type, timestamp: new Date(e.at).toISOString(), data: built.data }),
        createdAt: e.at,
        dedupeKey: built.dedupeKey,
        ref: built.ref,
        block: built.block,
      });
    }
    await deps.events.append(rows);
    if (rows.length > 0) deps.onWritten?.();
  }

  function flush(): Promise<void> {
    flushing = flushing.then(async () => {
      if (queue.length === 0) return;
      const batch = queue;
      queue = [];
      try {
        await write(batch);
      } catch (err) {
        // Put back in front (order per op), within the bound: the next flush tries again.
        queue = [...batch, ...queue].slice(0, deps.maxQueue);
        deps.logger.warn({ err, events: batch.length }, 'lifecycle events: the outbox write failed, will retry');
      }
    });
    return flushing;
  }

  const timer = setInterval(() => void flush(), deps.flushMs);
  timer.unref();
  return {
    record(event) {
      if (queue.length >= deps.maxQueue) {
        dropped++;
        if (dropped === 1 || dropped % 1000 === 0) {
          deps.logger.warn({ dropped }, 'lifecycle events: the outbox queue is full, events dropped');
        }
        return;
      }
      queue.push(event);
    },
    flush,
    dropped: () => dropped,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}

import { STORAGE_FAULT_TEXT, type StorageFault, type StorageFaultKind, storageFaultOf } from './storageFault.js';

/**
 * The storage's health as the service sees it (docs/guides/operations.md, "Storage faults"): the current fault, if
 * any, named once in the log with the database's location, failing /readyz, counted for /metrics, and cleared by
 * itself when a probe (a write lock taken and given back, the free space, the server's read-only flag: the
 * database handle's `probe`) passes again.
 *
 * Fed by what fails: the edges report every error they answer (a request's write that hit a full disk), and the
 * probe's own result. Why not a probe alone: a full disk is seen first by the write that needs one more page, and
 * the operator must see that write's cause, not `cannot rollback - no transaction is active`. Why a probe to clear:
 * a fault must not clear because a read went through while every write still fails.
 *
 * One line per change (a fault begins, changes kind, or clears), never one per failed request: at 3 a.m. the log
 * shows the cause and the path at the top, not under ten thousand copies of it.
 */
export interface CurrentStorageFault extends StorageFault {
  /** When this fault was first seen (ms since epoch). */
  readonly since: number;
}

export interface StorageHealth {
  /** The database's location for logs: the SQLite file's path, or PostgreSQL's host, port and database. */
  readonly location: string;
  /** Looks at an error something got from the store: a storage fault becomes (or stays) the current one. */
  report(err: unknown): StorageFault | undefined;
  /** The fault now, if any (no I/O). */
  current(): CurrentStorageFault | undefined;
  /**
   * Readiness: runs the probe (at most once per `minProbeIntervalMs` while a fault is current; concurrent callers
   * share one run) and answers the fault it leaves, if any. A probe failure that is no storage fault rejects.
   */
  check(): Promise<CurrentStorageFault | undefined>;
  /** How many times each kind of fault began since start, for /metrics. */
  began(): ReadonlyMap<StorageFaultKind, number>;
  close(): void;
}

export interface StorageHealthDeps {
  readonly location: string;
  /** Resolves when the storage takes writes now; rejects with the driver's error when it does not. */
  readonly probe: () => Promise<void>;
  readonly logger: {
    error(obj: object, msg: string): void;
    info(obj: object, msg: string): void;
  };
  readonly now: () => number;
  /** While a fault is current, the probe runs in the background this often, so service resumes unasked. */
  readonly retryMs?: number;
  readonly minProbeIntervalMs?: number;
}

/** Faults no probe clears: a corrupt file stays corrupt until the operator restores it (and restarts). */
const STICKY: ReadonlySet<StorageFaultKind> = new Set(['corrupt']);

export function createStorageHealth(deps: StorageHealthDeps): StorageHealth {
  const retryMs = deps.retryMs ?? 2000;
  const minInterval = deps.minProbeIntervalMs ?? 1000;
  const counts = new Map<StorageFaultKind, number>();
  let fault: CurrentStorageFault | undefined;
  let lastProbeAt = Number.NEGATIVE_INFINITY;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const stopRetrying = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  };

  const begin = (found: StorageFault): StorageFault => {
    if (fault !== undefined && fault.kind === found.kind) return found;
    fault = { ...found, since: deps.now() };
    counts.set(found.kind, (counts.get(found.kind) ?? 0) + 1);
    deps.logger.error(
      { storageFault: found.kind, location: deps.location, code: found.code, cause: found.message },
      `storage fault: ${STORAGE_FAULT_TEXT[found.kind]} at ${deps.location} (${found.code}: ${found.message}); requests that need storage answer 503 until it clears`,
    );
    if (timer === undefined && !closed && !STICKY.has(found.kind)) {
      timer = setInterval(() => {
        void probe().catch(() => {});
      }, retryMs);
      timer.unref();
    }
    return found;
  };

  const clear = () => {
    if (fault === undefined) return;
    const seconds = Math.round((deps.now() - fault.since) / 1000);
    deps.logger.info(
      { storageFault: fault.kind, location: deps.location, seconds },
      `storage recovered: ${STORAGE_FAULT_TEXT[fault.kind]} at ${deps.location} cleared after ${seconds} s`,
    );
    fault = undefined;
    stopRetrying();
  };

  const runProbe = async (): Promise<void> => {
    lastProbeAt = deps.now();
    try {
      await deps.probe();
    } catch (err) {
      const found = storageFaultOf(err);
      if (found === undefined) throw err;
      begin(found);
      return;
    }
    if (fault !== undefined && !STICKY.has(fault.kind)) clear();
  };

  const probe = (): Promise<void> => {
    running ??= runProbe().finally(() => {
      running = undefined;
    });
    return running;
  };

  return {
    location: deps.location,
    report(err) {
      const found = storageFaultOf(err);
      return found === undefined ? undefined : begin(found);
    },
    current: () => fault,
    async check() {
      if (fault !== undefined && (STICKY.has(fault.kind) || deps.now() - lastProbeAt < minInterval)) return fault;
      await probe();
      return fault;
    },
    began: () => counts,
    close() {
      closed = true;
      stopRetrying();
    },
  };
}

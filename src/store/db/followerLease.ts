import type pg from 'pg';
import { connectDedicatedClient } from './dedicatedClient.js';

/**
 * Which process follows a chain's settlement when several serve one database (src/settlement/README.md,
 * "Several processes"): every process may leave settlement on, and exactly one at a time holds each chain's
 * lease and follows it; the others stand by and take the lease within one poll once its holder is gone.
 *
 * On PostgreSQL the lease is a session-level advisory lock held on a connection of its own (the pool's settings): the
 * server releases it the moment that session ends (the process exits, is killed, or loses its connection), so a
 * dead follower never holds a chain. The key is scoped by the schema, so databases shared by schemas (the tests)
 * do not contend. SQLite is one service process per file (docs/guides/production.md, "Storage"): it always holds.
 */
export interface FollowerLease {
  /**
   * Whether this process holds `key` now, taking it if it is free. A lease once held is confirmed by a round trip on
   * its session (a session that failed has lost its locks: it is replaced, and the lease taken again if free).
   */
  hold(key: string): Promise<boolean>;
  /** Gives every lease up (ends the session). */
  close(): Promise<void>;
}

export const alwaysHeld: FollowerLease = {
  hold: async () => true,
  close: async () => {},
};

interface Session {
  readonly client: pg.Client;
  readonly held: Set<string>;
  broken: boolean;
}

export function createFollowerLease(handle: { readonly pgPool: pg.Pool | undefined }): FollowerLease {
  const pool = handle.pgPool;
  if (pool === undefined) return alwaysHeld;
  let session: Promise<Session> | undefined;
  let closed = false;

  const open = async (): Promise<Session> => {
    let s: Session | undefined;
    // A session that errors has lost its locks with it (the server ends them with the connection).
    const client = await connectDedicatedClient(pool, () => {
      if (s !== undefined) s.broken = true;
    });
    s = { client, held: new Set(), broken: false };
    return s;
  };
  const current = async (): Promise<Session> => {
    const s = session === undefined ? undefined : await session.catch(() => undefined);
    if (s !== undefined && !s.broken) return s;
    if (s !== undefined) s.client.end().catch(() => {});
    session = open();
    session.catch(() => {
      session = undefined;
    });
    return session;
  };

  return {
    async hold(key) {
      if (closed) return false;
      const s = await current();
      try {
        if (s.held.has(key)) {
          await s.client.query('SELECT 1');
          return true;
        }
        const res = await s.client.query<{ held: boolean }>(
          'SELECT pg_try_advisory_lock(hashtextextended(current_schema() || $1, 0)) AS held',
          [`:patron.settlement:${key}`],
        );
        if (res.rows[0]?.held !== true) return false;
        s.held.add(key);
        return true;
      } catch (err) {
        s.broken = true;
        s.held.clear();
        throw err;
      }
    },
    async close() {
      closed = true;
      const s = session === undefined ? undefined : await session.catch(() => undefined);
      session = undefined;
      // The session's locks end with it.
      await s?.client.end().catch(() => {});
    },
  };
}

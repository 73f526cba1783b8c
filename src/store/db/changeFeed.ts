import type pg from 'pg';
import { connectDedicatedClient } from './dedicatedClient.js';

/**
 * PostgreSQL's word that another process changed what the caches hold (src/cache/cachePolicy.ts): migration 0012
 * has every committed write to accounts, auth_tokens (created, revoked), dapps, webhooks and policies notify channel
 * `patron_changes`, and this process LISTENs on a connection of its own (dedicatedClient.ts). `generation()` moves with
 * every notification, so a cache entry loaded before one is a miss: a revoked token or a rotated key is refused by
 * every instance within a notification's latency (milliseconds), the CLI's writes included.
 *
 * While the connection is not listening (before it first connects, after it failed, until it is back) a
 * notification could be missed, so `generation()` moves on every read: nothing is served from a cache then.
 */
export interface ChangeFeed {
  generation(): number;
  close(): Promise<void>;
}

export const CHANGES_CHANNEL = 'patron_changes';
/** How long after a lost connection the feed tries again. */
const RECONNECT_MS = 1000;

export function startChangeFeed(pool: pg.Pool, onError: (err: unknown) => void = () => {}): ChangeFeed {
  let counter = 0;
  let listening = false;
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  const lost = (c: pg.Client, err?: unknown) => {
    if (client !== c) return;
    listening = false;
    client = undefined;
    c.end().catch(() => {});
    if (err !== undefined) onError(err);
    if (!closed) {
      retry = setTimeout(connect, RECONNECT_MS);
      retry.unref();
    }
  };

  async function connect(): Promise<void> {
    retry = undefined;
    if (closed) return;
    let c: pg.Client;
    try {
      c = await connectDedicatedClient(pool, (err) => lost(c, err));
    } catch (err) {
      onError(err);
      retry = setTimeout(connect, RECONNECT_MS);
      retry.unref();
      return;
    }
    if (closed) {
      await c.end().catch(() => {});
      return;
    }
    client = c;
    c.on('notification', () => {
      counter++;
    });
    c.on('end', () => lost(c));
    try {
      await c.query(`LISTEN ${CHANGES_CHANNEL}`);
      // Whatever changed while nobody listened is unknown: everything loaded before now is stale.
      counter++;
      listening = true;
    } catch (err) {
      lost(c, err);
    }
  }
  void connect();

  return {
    generation: () => (listening ? counter : ++counter),
    async close() {
      closed = true;
      if (retry !== undefined) clearTimeout(retry);
      const c = client;
      client = undefined;
      listening = false;
      await c?.end().catch(() => {});
    },
  };
}

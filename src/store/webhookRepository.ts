import { type Kysely, type Selectable, sql } from 'kysely';
import type { WebhookRecord } from './records.js';
import type { Database, WebhooksTable } from './schema.js';

export interface WebhookRepository {
  /**
   * Inserts the webhook unless its dApp already has `limit` webhooks. Race-free across processes: the
   * transaction first writes the dApp row (a row lock on PostgreSQL, the write lock on SQLite), so concurrent
   * creates for one dApp count and insert one after another.
   */
  insertWithinLimit(args: { webhook: WebhookRecord; limit: number }): Promise<'created' | 'limit' | 'no-dapp'>;
  listByDapp(dappId: string): Promise<WebhookRecord[]>;
  findInDapp(args: { dappId: string; webhookId: string }): Promise<WebhookRecord | undefined>;
  setActive(args: { dappId: string; webhookId: string; active: boolean; now: number }): Promise<boolean>;
  delete(args: { dappId: string; webhookId: string }): Promise<boolean>;
}

const toWebhook = (r: Selectable<WebhooksTable>): WebhookRecord => ({
  id: r.id,
  dappId: r.dapp_id,
  url: r.url,
  requestType: r.request_type,
  active: r.active === 1,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export function createWebhookRepository(db: Kysely<Database>): WebhookRepository {
  return {
    async insertWithinLimit({ webhook, limit }) {
      return db.transaction().execute(async (trx) => {
        const locked = await trx
          .updateTable('dapps')
          .set({ lock_version: sql`lock_version + 1` })
          .where('id', '=', webhook.dappId)
          .executeTakeFirst();
        if (Number(locked.numUpdatedRows) === 0) return 'no-dapp' as const;
        const { n } = await trx
          .selectFrom('webhooks')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('dapp_id', '=', webhook.dappId)
          .executeTakeFirstOrThrow();
        if (Number(n) >= limit) return 'limit' as const;
        await trx
          .insertInto('webhooks')
          .values({
            id: webhook.id,
            dapp_id: webhook.dappId,
            url: webhook.url,
            request_type: webhook.requestType,
            active: webhook.active ? 1 : 0,
            created_at: webhook.createdAt,
            updated_at: webhook.updatedAt,
          })
          .execute();
        return 'created' as const;
      });
    },
    async listByDapp(dappId) {
      const rows = await db
        .selectFrom('webhooks')
        .selectAll()
        .where('dapp_id', '=', dappId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toWebhook);
    },
    async findInDapp({ dappId, webhookId }) {
      const r = await db
        .selectFrom('webhooks')
        .selectAll()
        .where('id', '=', webhookId)
        .where('dapp_id', '=', dappId)
        .executeTakeFirst();
      return r && toWebhook(r);
    },
    async setActive({ dappId, webhookId, active, now }) {
      const res = await db
        .updateTable('webhooks')
        .set({ active: active ? 1 : 0, updated_at: now })
        .where('id', '=', webhookId)
        .where('dapp_id', '=', dappId)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },
    async delete({ dappId, webhookId }) {
      const res = await db
        .deleteFrom('webhooks')
        .where('id', '=', webhookId)
        .where('dapp_id', '=', dappId)
        .executeTakeFirst();
      return Number(res.numDeletedRows) > 0;
    },
  };
}

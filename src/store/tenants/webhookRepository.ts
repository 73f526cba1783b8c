import type BetterSqlite3 from 'better-sqlite3';
import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database, WebhooksTable } from '../db/schema.js';
import type { SealedWebhookRecord, WebhookRecord } from '../records.js';

/**
 * A webhook to insert. `includeOperation` may be left out (false, the column's default): rows written as they
 * were before migration 0010 stay valid input.
 */
export type NewWebhook = Omit<SealedWebhookRecord, 'includeOperation'> & { readonly includeOperation?: boolean };

export interface WebhookRepository {
  /**
   * Inserts the webhook unless its dApp already has `limit` webhooks. Race-free across processes: the
   * transaction first writes the dApp row (a row lock on PostgreSQL, the write lock on SQLite), so concurrent
   * creates for one dApp count and insert one after another.
   */
  insertWithinLimit(args: { webhook: NewWebhook; limit: number }): Promise<'created' | 'limit' | 'no-dapp'>;
  /** The dApp's webhooks without their secrets (list views). */
  listByDapp(dappId: string): Promise<WebhookRecord[]>;
  findInDapp(args: { dappId: string; webhookId: string }): Promise<WebhookRecord | undefined>;
  /** One webhook of the dApp with its sealed secret (the owner's test call and secret reveal). */
  findSealedInDapp(args: { dappId: string; webhookId: string }): Promise<SealedWebhookRecord | undefined>;
  /** The dApp's active webhooks with their sealed secrets: what the outbound caller needs. */
  listActiveSealed(dappId: string): Promise<SealedWebhookRecord[]>;
  /** Replaces the sealed secret of a webhook of this dApp (rotation); undefined when none matched. */
  replaceSigningSecret(args: {
    dappId: string;
    webhookId: string;
    signingSecretCiphertext: string;
    now: number;
  }): Promise<WebhookRecord | undefined>;
  /**
   * Sets the sealed secret only where there is none yet (rows older than migration 0002); false when the row
   * already has one (another process won the race) or is gone. Not a user change: updated_at stays.
   */
  fillMissingSigningSecret(args: { webhookId: string; signingSecretCiphertext: string }): Promise<boolean>;
  setActive(args: { dappId: string; webhookId: string; active: boolean; now: number }): Promise<boolean>;
  /** Sets the given flags of a webhook of this dApp (at least one); false when none matched. */
  update(args: {
    dappId: string;
    webhookId: string;
    active?: boolean;
    includeOperation?: boolean;
    now: number;
  }): Promise<boolean>;
  delete(args: { dappId: string; webhookId: string }): Promise<boolean>;
}

/** Every column but the secret: list and find queries select only these, so the secret cannot leak through them. */
const PUBLIC_COLUMNS = [
  'id',
  'dapp_id',
  'url',
  'request_type',
  'active',
  'include_operation',
  'created_at',
  'updated_at',
] as const;
type PublicRow = Pick<Selectable<WebhooksTable>, (typeof PUBLIC_COLUMNS)[number]>;

const toWebhook = (r: PublicRow): WebhookRecord => ({
  id: r.id,
  dappId: r.dapp_id,
  url: r.url,
  requestType: r.request_type,
  active: r.active === 1,
  includeOperation: r.include_operation === 1,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toSealedWebhook = (r: Selectable<WebhooksTable>): SealedWebhookRecord => ({
  ...toWebhook(r),
  signingSecretCiphertext: r.signing_secret_ciphertext,
});

/** `sqlite`: the active webhooks of a dApp (a cache miss on the paymaster path) from a statement prepared once. */
export function createWebhookRepository(db: Kysely<Database>, sqlite?: BetterSqlite3.Database): WebhookRepository {
  const activeOfDapp = sqlite?.prepare<[string], Selectable<WebhooksTable>>(
    'SELECT * FROM webhooks WHERE dapp_id = ? AND active = 1 ORDER BY created_at, id',
  );
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
            include_operation: webhook.includeOperation === true ? 1 : 0,
            created_at: webhook.createdAt,
            updated_at: webhook.updatedAt,
            signing_secret_ciphertext: webhook.signingSecretCiphertext,
          })
          .execute();
        return 'created' as const;
      });
    },
    async listByDapp(dappId) {
      const rows = await db
        .selectFrom('webhooks')
        .select(PUBLIC_COLUMNS)
        .where('dapp_id', '=', dappId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toWebhook);
    },
    async findInDapp({ dappId, webhookId }) {
      const r = await db
        .selectFrom('webhooks')
        .select(PUBLIC_COLUMNS)
        .where('id', '=', webhookId)
        .where('dapp_id', '=', dappId)
        .executeTakeFirst();
      return r && toWebhook(r);
    },
    async findSealedInDapp({ dappId, webhookId }) {
      const r = await db
        .selectFrom('webhooks')
        .selectAll()
        .where('id', '=', webhookId)
        .where('dapp_id', '=', dappId)
        .executeTakeFirst();
      return r && toSealedWebhook(r);
    },
    async listActiveSealed(dappId) {
      if (activeOfDapp !== undefined) return activeOfDapp.all(dappId).map(toSealedWebhook);
      const rows = await db
        .selectFrom('webhooks')
        .selectAll()
        .where('dapp_id', '=', dappId)
        .where('active', '=', 1)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toSealedWebhook);
    },
    async replaceSigningSecret({ dappId, webhookId, signingSecretCiphertext, now }) {
      const r = await db
        .updateTable('webhooks')
        .set({ signing_secret_ciphertext: signingSecretCiphertext, updated_at: now })
        .where('id', '=', webhookId)
        .where('dapp_id', '=', dappId)
        .returning(PUBLIC_COLUMNS)
        .executeTakeFirst();
      return r && toWebhook(r);
    },
    async fillMissingSigningSecret({ webhookId, signingSecretCiphertext }) {
      const res = await db
        .updateTable('webhooks')
        .set({ signing_secret_ciphertext: signingSecretCiphertext })
        .where('id', '=', webhookId)
        .where('signing_secret_ciphertext', 'is', null)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
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
    async update({ dappId, webhookId, active, includeOperation, now }) {
      const res = await db
        .updateTable('webhooks')
        .set({
          ...(active === undefined ? {} : { active: active ? 1 : 0 }),
          ...(includeOperation === undefined ? {} : { include_operation: includeOperation ? 1 : 0 }),
          updated_at: now,
        })
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

import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** Where a secret sealed with the master key is stored, to name it when it does not open. */
export type SealedSecretRef = { readonly table: 'dapps' | 'webhooks' | 'dapp_event_endpoints'; readonly id: string };

/**
 * Every value sealed with the master key (accounts/secretBox.ts), in one place: the dApps' API keys, the
 * webhooks' and the event endpoints' signing secrets, and the key's check value (migration 0015). A new sealed column belongs here too, or
 * `patron master-key rotate` would leave it under the old key.
 */
export interface SealedSecretsRepository {
  readCheck(): Promise<string | undefined>;
  /** Writes the check value unless there is one already (another process won the race); returns the stored one. */
  writeCheckOnce(args: { checkValue: string; now: number }): Promise<string>;
  /** One stored sealed secret, if any: the key check of a database from before migration 0015. */
  anySealed(): Promise<string | undefined>;
  /**
   * Replaces every sealed secret by `reseal({ sealed, ref })` and the check value by `checkValue`, in one transaction: a
   * `reseal` that throws (a secret the current key does not open) changes nothing. Returns how many of each.
   */
  resealAll(args: {
    reseal: (args: { sealed: string; ref: SealedSecretRef }) => string;
    checkValue: string;
    now: number;
  }): Promise<{ dappKeys: number; webhookSecrets: number; eventEndpointSecrets: number }>;
}

export function createSealedSecretsRepository(db: Kysely<Database>): SealedSecretsRepository {
  return {
    async readCheck() {
      const row = await db
        .selectFrom('patron_master_key_check')
        .select('check_value')
        .where('id', '=', 1)
        .executeTakeFirst();
      return row?.check_value;
    },
    async writeCheckOnce({ checkValue, now }) {
      await db
        .insertInto('patron_master_key_check')
        .values({ id: 1, check_value: checkValue, written_at: now })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      const row = await db
        .selectFrom('patron_master_key_check')
        .select('check_value')
        .where('id', '=', 1)
        .executeTakeFirstOrThrow();
      return row.check_value;
    },
    async anySealed() {
      const dapp = await db.selectFrom('dapps').select('api_key_ciphertext').limit(1).executeTakeFirst();
      if (dapp !== undefined) return dapp.api_key_ciphertext;
      const webhook = await db
        .selectFrom('webhooks')
        .select('signing_secret_ciphertext')
        .where('signing_secret_ciphertext', 'is not', null)
        .limit(1)
        .executeTakeFirst();
      return webhook?.signing_secret_ciphertext ?? undefined;
    },
    async resealAll({ reseal, checkValue, now }) {
      return db.transaction().execute(async (trx) => {
        // Not user changes: updated_at and lock_version stay as they are.
        const dapps = await trx.selectFrom('dapps').select(['id', 'api_key_ciphertext']).orderBy('id').execute();
        for (const d of dapps) {
          await trx
            .updateTable('dapps')
            .set({ api_key_ciphertext: reseal({ sealed: d.api_key_ciphertext, ref: { table: 'dapps', id: d.id } }) })
            .where('id', '=', d.id)
            .execute();
        }
        const webhooks = await trx
          .selectFrom('webhooks')
          .select(['id', 'signing_secret_ciphertext'])
          .where('signing_secret_ciphertext', 'is not', null)
          .orderBy('id')
          .execute();
        for (const w of webhooks) {
          if (w.signing_secret_ciphertext === null) continue;
          await trx
            .updateTable('webhooks')
            .set({
              signing_secret_ciphertext: reseal({
                sealed: w.signing_secret_ciphertext,
                ref: { table: 'webhooks', id: w.id },
              }),
            })
            .where('id', '=', w.id)
            .execute();
        }
        const endpoints = await trx
          .selectFrom('dapp_event_endpoints')
          .select(['dapp_id', 'signing_secret_ciphertext'])
          .orderBy('dapp_id')
          .execute();
        for (const e of endpoints) {
          await trx
            .updateTable('dapp_event_endpoints')
            .set({
              signing_secret_ciphertext: reseal({
                sealed: e.signing_secret_ciphertext,
                ref: { table: 'dapp_event_endpoints', id: e.dapp_id },
              }),
            })
            .where('dapp_id', '=', e.dapp_id)
            .execute();
        }
        await trx
          .insertInto('patron_master_key_check')
          .values({ id: 1, check_value: checkValue, written_at: now })
          .onConflict((oc) => oc.column('id').doUpdateSet({ check_value: checkValue, written_at: now }))
          .execute();
        return { dappKeys: dapps.length, webhookSecrets: webhooks.length, eventEndpointSecrets: endpoints.length };
      });
    },
  };
}

import type { Kysely, Selectable } from 'kysely';
import type { DappEventEndpointsTable, Database } from '../db/schema.js';

/** A dApp's lifecycle-event endpoint without its secret (what list views may show). */
export interface EventEndpointRecord {
  readonly dappId: string;
  readonly url: string;
  readonly active: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** The same with its Standard Webhooks secret sealed with the master key: what the deliverer needs. */
export interface SealedEventEndpointRecord extends EventEndpointRecord {
  readonly signingSecretCiphertext: string;
}

export interface EventEndpointRepository {
  findSealed(dappId: string): Promise<SealedEventEndpointRecord | undefined>;
  /** Sets the dApp's endpoint (one per dApp, replaced whole). 'no-dapp' when the dApp is gone. */
  upsert(args: {
    dappId: string;
    url: string;
    active: boolean;
    signingSecretCiphertext: string;
    now: number;
  }): Promise<'saved' | 'no-dapp'>;
  delete(dappId: string): Promise<boolean>;
}

const toRecord = (r: Selectable<DappEventEndpointsTable>): SealedEventEndpointRecord => ({
  dappId: r.dapp_id,
  url: r.url,
  active: r.active === 1,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
  signingSecretCiphertext: r.signing_secret_ciphertext,
});

export function createEventEndpointRepository(db: Kysely<Database>): EventEndpointRepository {
  return {
    async findSealed(dappId) {
      const r = await db
        .selectFrom('dapp_event_endpoints')
        .selectAll()
        .where('dapp_id', '=', dappId)
        .executeTakeFirst();
      return r && toRecord(r);
    },
    async upsert({ dappId, url, active, signingSecretCiphertext, now }) {
      const dapp = await db.selectFrom('dapps').select('id').where('id', '=', dappId).executeTakeFirst();
      if (dapp === undefined) return 'no-dapp';
      await db
        .insertInto('dapp_event_endpoints')
        .values({
          dapp_id: dappId,
          url,
          active: active ? 1 : 0,
          signing_secret_ciphertext: signingSecretCiphertext,
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) =>
          oc.column('dapp_id').doUpdateSet({
            url,
            active: active ? 1 : 0,
            signing_secret_ciphertext: signingSecretCiphertext,
            updated_at: now,
          }),
        )
        .execute();
      return 'saved';
    },
    async delete(dappId) {
      const res = await db.deleteFrom('dapp_event_endpoints').where('dapp_id', '=', dappId).executeTakeFirst();
      return Number(res.numDeletedRows) > 0;
    },
  };
}

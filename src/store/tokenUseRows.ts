import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

/**
 * A sponsorship token's jti spent (table sponsorship_token_uses, migration 0017) through Kysely, inside the caller's
 * transaction or alone: one statement, so exact under concurrency on both back ends (the insert meets the primary
 * key; only a row already expired is taken over). true: spent now; false: it was spent already.
 */
export async function spendTokenUse(
  db: Kysely<Database> | Transaction<Database>,
  args: { dappId: string; jti: string; expiresAt: number; nowSeconds: number },
): Promise<boolean> {
  const result = await db
    .insertInto('sponsorship_token_uses')
    .values({ dapp_id: args.dappId, jti: args.jti, expires_at: args.expiresAt })
    .onConflict((oc) =>
      oc
        .columns(['dapp_id', 'jti'])
        .doUpdateSet((eb) => ({ expires_at: eb.ref('excluded.expires_at') }))
        .where('sponsorship_token_uses.expires_at', '<', args.nowSeconds),
    )
    .executeTakeFirst();
  return result.numInsertedOrUpdatedRows !== undefined && result.numInsertedOrUpdatedRows > 0n;
}

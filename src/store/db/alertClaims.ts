import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * One copy of each operator alert across the instances that share the database (table alert_claims, migration
 * 0025; docs/guides/operations.md, "Alerts"). Every instance runs the solvency guard and the signer watch and sees the
 * same transition; each asks `claim` before posting, and only the one whose upsert moved the subject's row to the new
 * state posts. A flap (halted → recovered → halted) moves the row each time, so each change is posted once.
 *
 * A row that has held its state for `staleMs` is taken again by the same state: a stale row (the `recovered` of an
 * incident was never seen because every instance restarted meanwhile) must not silence the next incident for good.
 */
export interface AlertClaims {
  /** True when this caller moved `subject` to `state` (and so posts it); false when another got there first. */
  claim(args: {
    readonly subject: string;
    readonly state: string;
    readonly now: number;
    readonly staleMs: number;
  }): Promise<boolean>;
}

export function createAlertClaims(db: Kysely<Database>): AlertClaims {
  return {
    async claim({ subject, state, now, staleMs }) {
      // One statement on both back ends: the upsert's WHERE is evaluated under the row's lock (PostgreSQL) or the
      // database's write lock (SQLite), so of two instances moving the row to the same state, one changes it.
      const result = await db
        .insertInto('alert_claims')
        .values({ subject, state, posted_at: now })
        .onConflict((oc) =>
          oc
            .column('subject')
            .doUpdateSet((eb) => ({ state: eb.ref('excluded.state'), posted_at: eb.ref('excluded.posted_at') }))
            .where((eb) =>
              eb.or([
                eb('alert_claims.state', '<>', eb.ref('excluded.state')),
                eb('alert_claims.posted_at', '<=', now - staleMs),
              ]),
            ),
        )
        .executeTakeFirst();
      return result.numInsertedOrUpdatedRows !== undefined && result.numInsertedOrUpdatedRows > 0n;
    },
  };
}

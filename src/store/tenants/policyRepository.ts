import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type pg from 'pg';
import { changeGeneration } from '../db/changeGeneration.js';
import type { Database, PoliciesTable } from '../db/schema.js';
import { isUniqueViolation } from '../db/uniqueViolation.js';

/**
 * A dApp's sponsorship policies. Every query is scoped by the dApp, so one tenant can neither read nor change
 * another's policies whatever id it names. The rules are stored as validated JSON and returned parsed but
 * untyped: their meaning (and their schema) belongs to the policy domain (src/policies/policySchema.ts).
 *
 * Every write (insert, update, delete) adds one to the dApp's policy version (table policy_versions) in its own
 * transaction, so a reservation can tell, atomically with itself, whether the policies its request evaluated
 * are still the current ones (src/store/ledger/spendLedgerRepository.ts).
 */
export interface PolicyRecord {
  readonly id: string;
  readonly dappId: string;
  readonly name: string;
  readonly active: boolean;
  readonly rules: unknown;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface PolicyRepository {
  /** 'name-taken' when the dApp already has a policy of that name. */
  insert(policy: PolicyRecord): Promise<'created' | 'name-taken'>;
  listByDapp(dappId: string): Promise<PolicyRecord[]>;
  findInDapp(args: { dappId: string; policyId: string }): Promise<PolicyRecord | undefined>;
  /** Changes what is given; undefined when no policy of this dApp has that id, 'name-taken' on a clash. */
  update(args: {
    dappId: string;
    policyId: string;
    name?: string;
    active?: boolean;
    rules?: unknown;
    now: number;
  }): Promise<PolicyRecord | 'name-taken' | undefined>;
  delete(args: { dappId: string; policyId: string }): Promise<boolean>;
  /**
   * The dApp's current policy version (0: it never had a policy). On SQLite it costs no query while nothing
   * changed: this process's writes forget the dApp's known version, and another connection's policy write (the CLI,
   * another process) moves the change counter (migration 0014), which forgets them all.
   */
  version(dappId: string): Promise<number>;
}

/** Versions remembered on SQLite (a dApp not asked for in a while is read again). */
const MAX_KNOWN_VERSIONS = 10_000;

async function bumpVersion(trx: Transaction<Database>, dappId: string): Promise<void> {
  await trx
    .insertInto('policy_versions')
    .values({ dapp_id: dappId, version: 1 })
    .onConflict((oc) => oc.column('dapp_id').doUpdateSet((eb) => ({ version: eb('policy_versions.version', '+', 1) })))
    .execute();
}

const toPolicy = (r: Selectable<PoliciesTable>): PolicyRecord => ({
  id: r.id,
  dappId: r.dapp_id,
  name: r.name,
  active: r.active === 1,
  rules: JSON.parse(r.rules) as unknown,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** How stale another connection's policy write may be seen on SQLite (see `version`). */
export const COUNTER_EVERY_MS = 1;

export function createPolicyRepository(
  db: Kysely<Database>,
  direct: { readonly sqlite?: BetterSqlite3.Database | undefined; readonly pgPool?: pg.Pool | undefined } = {},
): PolicyRepository {
  const { sqlite, pgPool } = direct;
  const known = new Map<string, number>();
  // An in-memory database has no other connection; a file's other connections' policy writes move the change counter.
  const changeCounter = sqlite?.memory === false ? changeGeneration(sqlite) : undefined;
  const readVersion = sqlite
    ?.prepare<[string], number>('SELECT version FROM policy_versions WHERE dapp_id = ?')
    .pluck();
  let seen = changeCounter?.get();
  // Reading the counter costs a few µs of the serving loop (PRAGMA data_version, read before, ~8 µs under the request
  // log's writes), and it was read on every request's last step. Read at most once per COUNTER_EVERY_MS: this
  // process's own writes are seen at once (`written`), another process's commit (the CLI, a cluster worker) at most
  // that late, well inside the time its acknowledgement takes to reach anyone.
  let counterReadAt = Number.NEGATIVE_INFINITY;
  /** A write of this process: the dApp's version is read again next time (before and after the commit). */
  const written = async <T>(dappId: string, write: (trx: Transaction<Database>) => Promise<T>): Promise<T> => {
    known.delete(dappId);
    try {
      return await db.transaction().execute(async (trx) => {
        const result = await write(trx);
        await bumpVersion(trx, dappId);
        return result;
      });
    } finally {
      known.delete(dappId);
    }
  };
  const findInDapp = async ({ dappId, policyId }: { dappId: string; policyId: string }) => {
    const r = await db
      .selectFrom('policies')
      .selectAll()
      .where('id', '=', policyId)
      .where('dapp_id', '=', dappId)
      .executeTakeFirst();
    return r && toPolicy(r);
  };
  return {
    async insert(p) {
      try {
        await written(p.dappId, (trx) =>
          trx
            .insertInto('policies')
            .values({
              id: p.id,
              dapp_id: p.dappId,
              name: p.name,
              active: p.active ? 1 : 0,
              rules: JSON.stringify(p.rules),
              created_at: p.createdAt,
              updated_at: p.updatedAt,
            })
            .execute(),
        );
        return 'created';
      } catch (err) {
        if (isUniqueViolation(err)) return 'name-taken';
        throw err;
      }
    },
    async listByDapp(dappId) {
      const rows = await db
        .selectFrom('policies')
        .selectAll()
        .where('dapp_id', '=', dappId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toPolicy);
    },
    findInDapp,
    async update({ dappId, policyId, name, active, rules, now }) {
      try {
        const res = await written(dappId, (trx) =>
          trx
            .updateTable('policies')
            .set({
              updated_at: now,
              ...(name === undefined ? {} : { name }),
              ...(active === undefined ? {} : { active: active ? 1 : 0 }),
              ...(rules === undefined ? {} : { rules: JSON.stringify(rules) }),
            })
            .where('id', '=', policyId)
            .where('dapp_id', '=', dappId)
            .executeTakeFirst(),
        );
        return Number(res.numUpdatedRows) > 0 ? findInDapp({ dappId, policyId }) : undefined;
      } catch (err) {
        if (isUniqueViolation(err)) return 'name-taken';
        throw err;
      }
    },
    async delete({ dappId, policyId }) {
      const res = await written(dappId, (trx) =>
        trx.deleteFrom('policies').where('id', '=', policyId).where('dapp_id', '=', dappId).executeTakeFirst(),
      );
      return Number(res.numDeletedRows) > 0;
    },
    async version(dappId) {
      // PostgreSQL: no number tells this process of another's commit, so every check is a query: a named prepared
      // statement on the pool, without Kysely's compilation (~40 µs of CPU per check here, a third of the same
      // query through Kysely).
      if (pgPool !== undefined) {
        const res = await pgPool.query<{ version: string | number }>({
          name: 'patron_policy_version',
          text: 'SELECT version FROM policy_versions WHERE dapp_id = $1',
          values: [dappId],
        });
        return Number(res.rows[0]?.version ?? 0);
      }
      // SQLite inside another's transaction (a Kysely one awaiting): a direct read would see its uncommitted
      // writes, so the query waits for the connection like any other.
      if (readVersion === undefined || sqlite?.inTransaction === true) {
        const row = await db
          .selectFrom('policy_versions')
          .select('version')
          .where('dapp_id', '=', dappId)
          .executeTakeFirst();
        return Number(row?.version ?? 0);
      }
      const t = performance.now();
      if (t - counterReadAt >= COUNTER_EVERY_MS) {
        counterReadAt = t;
        const now = changeCounter?.get();
        if (now !== seen) {
          known.clear();
          seen = now;
        }
      }
      const hit = known.get(dappId);
      if (hit !== undefined) return hit;
      const v = readVersion.get(dappId) ?? 0;
      if (known.size >= MAX_KNOWN_VERSIONS) known.clear();
      known.set(dappId, v);
      return v;
    },
  };
}

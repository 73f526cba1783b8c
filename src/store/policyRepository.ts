import type { Kysely, Selectable } from 'kysely';
import type { Database, PoliciesTable } from './schema.js';
import { isUniqueViolation } from './uniqueViolation.js';

/**
 * A dApp's sponsorship policies. Every query is scoped by the dApp, so one tenant can neither read nor change
 * another's policies whatever id it names. The rules are stored as validated JSON and returned parsed but
 * untyped: their meaning (and their schema) belongs to the policy domain (src/policies/policySchema.ts).
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

export function createPolicyRepository(db: Kysely<Database>): PolicyRepository {
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
        await db
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
          .execute();
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
        const res = await db
          .updateTable('policies')
          .set({
            updated_at: now,
            ...(name === undefined ? {} : { name }),
            ...(active === undefined ? {} : { active: active ? 1 : 0 }),
            ...(rules === undefined ? {} : { rules: JSON.stringify(rules) }),
          })
          .where('id', '=', policyId)
          .where('dapp_id', '=', dappId)
          .executeTakeFirst();
        return Number(res.numUpdatedRows) > 0 ? findInDapp({ dappId, policyId }) : undefined;
      } catch (err) {
        if (isUniqueViolation(err)) return 'name-taken';
        throw err;
      }
    },
    async delete({ dappId, policyId }) {
      const res = await db
        .deleteFrom('policies')
        .where('id', '=', policyId)
        .where('dapp_id', '=', dappId)
        .executeTakeFirst();
      return Number(res.numDeletedRows) > 0;
    },
  };
}

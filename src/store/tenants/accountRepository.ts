import type { Kysely, Selectable } from 'kysely';
import type { AccountsTable, AuthTokensTable, Database } from '../db/schema.js';
import { isUniqueViolation } from '../db/uniqueViolation.js';
import type { Account, AuthTokenRecord } from '../records.js';

export interface AccountRepository {
  /**
   * Creates the account and its first member, its owner, who signs in with the account's email (the member takes
   * the account's id, as migration 0026 gave every existing account's). Undefined when the email is taken.
   */
  create(account: Account): Promise<Account | undefined>;
  findById(id: string): Promise<Account | undefined>;
  findByEmail(email: string): Promise<Account | undefined>;
  list(): Promise<Account[]>;
  count(): Promise<number>;
  insertToken(token: AuthTokenRecord & { readonly tokenHash: string }): Promise<void>;
  findTokenByHash(tokenHash: string): Promise<AuthTokenRecord | undefined>;
  /** The account's tokens; one member's only when `memberId` is given. */
  listTokens(accountId: string, memberId?: string): Promise<AuthTokenRecord[]>;
  /** Revokes a live token of this account (of this member, when given); false when none matched. */
  revokeToken(args: { accountId: string; memberId?: string; tokenId: string; now: number }): Promise<boolean>;
  touchToken(args: { tokenId: string; now: number }): Promise<void>;
}

const toAccount = (r: Selectable<AccountsTable>): Account => ({ id: r.id, email: r.email, createdAt: r.created_at });

const toToken = (r: Selectable<AuthTokensTable>): AuthTokenRecord => ({
  id: r.id,
  accountId: r.account_id,
  prefix: r.prefix,
  name: r.name,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
  memberId: r.member_id,
});

export function createAccountRepository(db: Kysely<Database>): AccountRepository {
  return {
    async create(account) {
      try {
        await db.transaction().execute(async (trx) => {
          await trx
            .insertInto('accounts')
            .values({ id: account.id, email: account.email, created_at: account.createdAt })
            .execute();
          await trx
            .insertInto('account_members')
            .values({
              id: account.id,
              account_id: account.id,
              email: account.email,
              role: 'owner',
              created_at: account.createdAt,
            })
            .execute();
        });
        return account;
      } catch (err) {
        if (isUniqueViolation(err)) return undefined;
        throw err;
      }
    },
    async findById(id) {
      const r = await db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toAccount(r);
    },
    async findByEmail(email) {
      const r = await db.selectFrom('accounts').selectAll().where('email', '=', email).executeTakeFirst();
      return r && toAccount(r);
    },
    async list() {
      return (await db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute()).map(toAccount);
    },
    async count() {
      const r = await db
        .selectFrom('accounts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
    async insertToken(t) {
      await db
        .insertInto('auth_tokens')
        .values({
          id: t.id,
          account_id: t.accountId,
          token_hash: t.tokenHash,
          prefix: t.prefix,
          name: t.name,
          created_at: t.createdAt,
          last_used_at: t.lastUsedAt,
          revoked_at: t.revokedAt,
          member_id: t.memberId,
        })
        .execute();
    },
    async findTokenByHash(tokenHash) {
      const r = await db.selectFrom('auth_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
      return r && toToken(r);
    },
    async listTokens(accountId, memberId) {
      let q = db.selectFrom('auth_tokens').selectAll().where('account_id', '=', accountId);
      if (memberId !== undefined) q = q.where('member_id', '=', memberId);
      const rows = await q.orderBy('created_at').orderBy('id').execute();
      return rows.map(toToken);
    },
    async revokeToken({ accountId, memberId, tokenId, now }) {
      let q = db
        .updateTable('auth_tokens')
        .set({ revoked_at: now })
        .where('id', '=', tokenId)
        .where('account_id', '=', accountId)
        .where('revoked_at', 'is', null);
      if (memberId !== undefined) q = q.where('member_id', '=', memberId);
      const res = await q.executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },
    async touchToken({ tokenId, now }) {
      await db.updateTable('auth_tokens').set({ last_used_at: now }).where('id', '=', tokenId).execute();
    },
  };
}

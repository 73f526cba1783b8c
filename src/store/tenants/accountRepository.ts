import type { Kysely, Selectable } from 'kysely';
import type { AccountsTable, AuthTokensTable, Database } from '../db/schema.js';
import { isUniqueViolation } from '../db/uniqueViolation.js';
import type { Account, AuthTokenRecord } from '../records.js';

export interface AccountRepository {
  /** Returns undefined when the email is taken. */
  create(account: Account): Promise<Account | undefined>;
  findById(id: string): Promise<Account | undefined>;
  findByEmail(email: string): Promise<Account | undefined>;
  list(): Promise<Account[]>;
  count(): Promise<number>;
  insertToken(token: AuthTokenRecord & { readonly tokenHash: string }): Promise<void>;
  findTokenByHash(tokenHash: string): Promise<AuthTokenRecord | undefined>;
  listTokens(accountId: string): Promise<AuthTokenRecord[]>;
  /** Revokes a live token of this account; false when none matched. */
  revokeToken(args: { accountId: string; tokenId: string; now: number }): Promise<boolean>;
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
});

export function createAccountRepository(db: Kysely<Database>): AccountRepository {
  return {
    async create(account) {
      try {
        await db
          .insertInto('accounts')
          .values({ id: account.id, email: account.email, created_at: account.createdAt })
          .execute();
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
        })
        .execute();
    },
    async findTokenByHash(tokenHash) {
      const r = await db.selectFrom('auth_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
      return r && toToken(r);
    },
    async listTokens(accountId) {
      const rows = await db
        .selectFrom('auth_tokens')
        .selectAll()
        .where('account_id', '=', accountId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toToken);
    },
    async revokeToken({ accountId, tokenId, now }) {
      const res = await db
        .updateTable('auth_tokens')
        .set({ revoked_at: now })
        .where('id', '=', tokenId)
        .where('account_id', '=', accountId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },
    async touchToken({ tokenId, now }) {
      await db.updateTable('auth_tokens').set({ last_used_at: now }).where('id', '=', tokenId).execute();
    },
  };
}

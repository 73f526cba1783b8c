import { type Kysely, sql } from 'kysely';
import type { DatabaseKind } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { decimalSum, joinDecimalSum } from './decimalSum.js';

const HOUR_MS = 3_600_000;

/**
 * What included ops took from a paymaster's EntryPoint deposit, from the ledger (`deposit_wei`, migration 0028): the
 * solvency guard's spend rate (src/solvency/depositSpendRate.ts). The ledger is shared by every instance and kept
 * across restarts, so the rate is too; deposits, withdrawals and top-ups are not in it (they are not spend).
 */
export interface DepositSpendRepository {
  /** Per hour (unix ms ÷ 3,600,000, by the row's close), the wei taken since `since` (unix ms), exactly. */
  byHour(args: {
    readonly chainId: number;
    readonly paymaster: string;
    readonly since: number;
  }): Promise<readonly { readonly hour: number; readonly wei: bigint }[]>;
  /** When (unix ms) the first op counted here closed; undefined when none has. */
  firstAt(args: { readonly chainId: number; readonly paymaster: string }): Promise<number | undefined>;
}

export function createDepositSpendRepository(db: Kysely<Database>, kind: DatabaseKind): DepositSpendRepository {
  const of = (chainId: number, paymaster: string) =>
    db
      .selectFrom('spend_reservations')
      .where('chain_id', '=', chainId)
      .where('paymaster', '=', paymaster.toLowerCase())
      // The partial index's own condition (spend_reservations_deposit_spend): a planner uses it only when implied.
      .where('deposit_wei', 'is not', null);
  return {
    async byHour({ chainId, paymaster, since }) {
      const sum = decimalSum(kind, 'deposit_wei');
      // closed_at is a BIGINT: integer division on both back ends.
      const hour = sql<number | string>`closed_at / ${sql.lit(HOUR_MS)}`;
      const rows = await of(chainId, paymaster)
        .where('closed_at', '>=', since)
        .select([hour.as('hour'), sum.high.as('high'), sum.low.as('low')])
        .groupBy(hour)
        .execute();
      return rows.map((r) => ({ hour: Number(r.hour), wei: joinDecimalSum(kind, r.high, r.low) }));
    },
    async firstAt({ chainId, paymaster }) {
      const row = await of(chainId, paymaster)
        .select((eb) => eb.fn.min('closed_at').as('first'))
        .executeTakeFirst();
      return row?.first === null || row?.first === undefined ? undefined : Number(row.first);
    },
  };
}

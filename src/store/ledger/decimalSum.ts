import { type RawBuilder, sql } from 'kysely';
import type { DatabaseKind } from '../db/database.js';

/**
 * An exact SQL sum of a column of decimal strings (wei, USD micros), in two parts: SQLite's integers are 64 bits and
 * its sum() fails past 9.2 × 10^18 (9.2 ETH in wei), so it sums the digits above and below the last 12 apart;
 * PostgreSQL sums NUMERIC and answers text (`low` is null). `joinDecimalSum` puts the parts back together as a bigint.
 */
export interface DecimalSum {
  readonly high: RawBuilder<string | number | null>;
  readonly low: RawBuilder<number | null>;
}

export function decimalSum(kind: DatabaseKind, column: string): DecimalSum {
  const c = sql.ref(column);
  if (kind === 'postgres') return { high: sql<string | null>`sum(cast(${c} as numeric))::text`, low: sql<null>`null` };
  return {
    high: sql<
      number | null
    >`sum(case when length(${c}) > 12 then cast(substr(${c}, 1, length(${c}) - 12) as integer) else 0 end)`,
    low: sql<number | null>`sum(cast(substr(${c}, -12) as integer))`,
  };
}

export function joinDecimalSum(kind: DatabaseKind, high: string | number | null, low: number | null): bigint {
  return (
    (high === null ? 0n : BigInt(String(high).replace(/\.0*$/, ''))) * (kind === 'postgres' ? 1n : 10n ** 12n) +
    BigInt(low ?? 0)
  );
}

import type { LedgerFilter, LedgerQueryRepository } from '../store/ledger/ledgerQueryRepository.js';
import { type CsvColumn, csvHeader, csvRecord } from './csvRecord.js';
import { type LedgerItemView, toLedgerItemView } from './ledgerWire.js';

/**
 * The ledger as CSV (docs/guides/ledger.md, "CSV"), produced page by page so a month of a busy dApp is never in
 * memory: the generator reads the next keyset page only when the consumer (the HTTP reply, or the CLI's file) asks
 * for more. Every field is quoted and every text field neutralised by csvRecord (csvRecord.ts has the rule and why):
 * the end-user id is the sponsorship token's `sub`, text an attacker may choose. The amounts, the chain id and the
 * block are number columns, written as plain decimals (none is negative today; a negative one would stay numeric).
 */
export const LEDGER_CSV_COLUMNS: readonly CsvColumn<LedgerItemView>[] = [
  { name: 'created_at', kind: 'text', value: (v) => v.createdAt },
  { name: 'id', kind: 'text', value: (v) => v.id },
  { name: 'chain_id', kind: 'number', value: (v) => v.chainId },
  { name: 'paymaster', kind: 'text', value: (v) => v.paymaster },
  { name: 'sender', kind: 'text', value: (v) => v.sender },
  { name: 'user', kind: 'text', value: (v) => v.user },
  { name: 'policy_ids', kind: 'text', value: (v) => (v.policyIds === null ? null : v.policyIds.join(' ')) },
  { name: 'mode', kind: 'text', value: (v) => v.mode },
  { name: 'status', kind: 'text', value: (v) => v.status },
  { name: 'reserved_wei', kind: 'number', value: (v) => v.reservedWei },
  { name: 'actual_wei', kind: 'number', value: (v) => v.actualWei },
  { name: 'actual_usd', kind: 'number', value: (v) => v.actualUsd },
  { name: 'user_op_hash', kind: 'text', value: (v) => v.userOpHash },
  { name: 'tx_hash', kind: 'text', value: (v) => v.txHash },
  { name: 'block_number', kind: 'number', value: (v) => v.blockNumber },
  { name: 'closed_at', kind: 'text', value: (v) => v.closedAt },
  { name: 'expires_at', kind: 'text', value: (v) => v.expiresAt },
];

/** Rows read per query while exporting. */
export const CSV_PAGE_ROWS = 1000;

/** The header, then one chunk of rows per page, oldest first. */
export async function* ledgerCsv(args: {
  readonly ledger: Pick<LedgerQueryRepository, 'list'>;
  readonly filter: LedgerFilter;
  readonly pageRows?: number;
}): AsyncGenerator<string> {
  yield csvHeader(LEDGER_CSV_COLUMNS);
  const limit = args.pageRows ?? CSV_PAGE_ROWS;
  let after: { createdAt: number; id: string } | undefined;
  for (;;) {
    const page = await args.ledger.list({ filter: args.filter, after, limit, order: 'asc' });
    if (page.length > 0) yield page.map((i) => csvRecord(LEDGER_CSV_COLUMNS, toLedgerItemView(i))).join('');
    const last = page.at(-1);
    if (page.length < limit || last === undefined) return;
    after = { createdAt: last.createdAt, id: last.id };
  }
}

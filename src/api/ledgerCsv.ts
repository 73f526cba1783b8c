import type { LedgerFilter, LedgerQueryRepository } from '../store/ledgerQueryRepository.js';
import { type LedgerItemView, toLedgerItemView } from './ledgerWire.js';

/**
 * The ledger as CSV (RFC 4180: CRLF line ends, a header row, a field quoted when it holds a comma, a quote or a
 * line break, quotes doubled), produced page by page so a month of a busy dApp is never in memory: the generator
 * reads the next keyset page only when the consumer (the HTTP reply, or the CLI's file) asks for more.
 *
 * CSV injection: a spreadsheet runs a cell that starts with = + - @ (or a tab or carriage return) as a formula. Every
 * such cell gets a leading ' (OWASP's advice), so an end-user id chosen by an attacker ("=HYPERLINK(…)") is shown
 * as text. Numbers are never negative here, so no amount is altered.
 */
export const LEDGER_CSV_COLUMNS = [
  'created_at',
  'id',
  'chain_id',
  'paymaster',
  'sender',
  'user',
  'policy_ids',
  'mode',
  'status',
  'reserved_wei',
  'actual_wei',
  'actual_usd',
  'user_op_hash',
  'tx_hash',
  'block_number',
  'closed_at',
  'expires_at',
] as const;

/** Rows read per query while exporting. */
export const CSV_PAGE_ROWS = 1000;

export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  let s = String(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

export function csvRow(v: LedgerItemView): string {
  const cells: (string | number | null)[] = [
    v.createdAt,
    v.id,
    v.chainId,
    v.paymaster,
    v.sender,
    v.user,
    v.policyIds === null ? null : v.policyIds.join(' '),
    v.mode,
    v.status,
    v.reservedWei,
    v.actualWei,
    v.actualUsd,
    v.userOpHash,
    v.txHash,
    v.blockNumber,
    v.closedAt,
    v.expiresAt,
  ];
  return `${cells.map(csvCell).join(',')}\r\n`;
}

/** The header, then one chunk of rows per page, oldest first. */
export async function* ledgerCsv(args: {
  readonly ledger: Pick<LedgerQueryRepository, 'list'>;
  readonly filter: LedgerFilter;
  readonly pageRows?: number;
}): AsyncGenerator<string> {
  yield `${LEDGER_CSV_COLUMNS.join(',')}\r\n`;
  const limit = args.pageRows ?? CSV_PAGE_ROWS;
  let after: { createdAt: number; id: string } | undefined;
  for (;;) {
    const page = await args.ledger.list({ filter: args.filter, after, limit, order: 'asc' });
    if (page.length > 0) yield page.map((i) => csvRow(toLedgerItemView(i))).join('');
    const last = page.at(-1);
    if (page.length < limit || last === undefined) return;
    after = { createdAt: last.createdAt, id: last.id };
  }
}

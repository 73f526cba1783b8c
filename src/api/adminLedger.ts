import { Readable } from 'node:stream';
import type { AccountService } from '../accounts/accountService.js';
import { ValidationError } from '../errors/PatronError.js';
import type { Store } from '../store/store.js';
import { ADMIN_TAG } from './adminAccount.js';
import { DAPP_NOT_FOUND, dappParams } from './adminDapps.js';
import { ledgerCsv } from './ledgerCsv.js';
import {
  decodeCursor,
  encodeCursor,
  filterOf,
  ledgerFilterQuery,
  ledgerListQuery,
  ledgerPage,
  ledgerStatsQuery,
  ledgerStatsView,
  toLedgerItemView,
  toLedgerStatsView,
} from './ledgerWire.js';
import { type RouteDef, route } from './route.js';

/**
 * The itemized ledger of a dApp (docs/guides/ledger.md): every sponsorship Patron signed for it, filtered and paged
 * by an opaque keyset cursor, its totals per day, policy, user or chain, and the CSV export, streamed. The dApp must
 * be the caller's; another account's reads as missing (404).
 */
const PATH = '/api/admin/dapps/:dappId/ledger';
const QUERY_ERRORS = { '400': 'A query parameter is invalid; the message names it', ...DAPP_NOT_FOUND };

export function adminLedgerRoutes(deps: { accounts: AccountService; store: Store }): RouteDef[] {
  const { accounts, store } = deps;
  const owned = async (accountId: string, dappId: string) => (await accounts.getDapp({ accountId, dappId })).id;
  const common = { auth: 'account', tag: ADMIN_TAG } as const;
  return [
    route({
      ...common,
      method: 'GET',
      path: PATH,
      operationId: 'listDappLedger',
      summary: "The dApp's signed sponsorships, newest first; page with `cursor` = `nextCursor`",
      description:
        'Every op Patron signed for the dApp (sponsored, and token-mode ops the dApp guarantees), with its status ' +
        '(reserved, included, reverted, expired, superseded, paid_by_user), worst case, actual cost in wei and USD, and ' +
        'transaction. The cursor is stable under inserts: no row shows twice, none is skipped.',
      params: dappParams,
      query: ledgerListQuery,
      answer: { envelope: 'Ledger fetched', data: ledgerPage },
      errors: QUERY_ERRORS,
      handler: async ({ account, params, query: q }) => {
        const dappId = await owned(account.id, params.dappId);
        const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
        if (q.cursor !== undefined && after === undefined) {
          throw new ValidationError('cursor must be a nextCursor from an earlier page');
        }
        const { cursor: _c, limit, ...filters } = q;
        const items = await store.ledger.list({ filter: filterOf(dappId, filters), after, limit });
        const last = items.at(-1);
        return {
          items: items.map(toLedgerItemView),
          nextCursor: items.length === limit && last !== undefined ? encodeCursor(last) : null,
        };
      },
    }),
    route({
      ...common,
      method: 'GET',
      path: `${PATH}/stats`,
      operationId: 'getDappLedgerStats',
      summary: "The dApp's ledger totals per day, policy, user or chain (count, reserved and settled wei, USD)",
      description:
        '`groupBy` takes one dimension or two (`day,policy`: spend per day per policy). An op of two policies ' +
        'counts in each of their groups; `total` counts it once.',
      params: dappParams,
      query: ledgerStatsQuery,
      answer: { envelope: 'Ledger stats fetched', data: ledgerStatsView },
      errors: QUERY_ERRORS,
      handler: async ({ account, params, query: q }) => {
        const dappId = await owned(account.id, params.dappId);
        const { groupBy, ...filters } = q;
        const filter = filterOf(dappId, filters);
        const [groups, [overall]] = await Promise.all([
          store.ledger.stats({ filter, groupBy }),
          store.ledger.stats({ filter, groupBy: [] }),
        ]);
        return toLedgerStatsView({ groupBy, groups, overall });
      },
    }),
    route({
      ...common,
      method: 'GET',
      path: `${PATH}.csv`,
      operationId: 'exportDappLedgerCsv',
      summary: "The dApp's ledger as CSV, oldest first, streamed (the same filters as the list)",
      description:
        'RFC 4180 with a header row, every field quoted, CRLF line ends; in text fields an apostrophe goes before ' +
        'every = + - @ (or full-width/NFKC form) that does not follow a letter or digit, so no spreadsheet runs a ' +
        'cell as a formula (docs/guides/ledger.md, "CSV"). Read from the database 1,000 rows at a time while the ' +
        'reply is written.',
      params: dappParams,
      query: ledgerFilterQuery,
      answer: {
        file: {
          contentType: 'text/csv',
          description: 'The ledger as CSV',
          headers: { 'Content-Disposition': { schema: { type: 'string' } } },
        },
      },
      errors: QUERY_ERRORS,
      handler: async ({ account, params, query: q, reply }) => {
        const dappId = await owned(account.id, params.dappId);
        const stream = Readable.from(ledgerCsv({ ledger: store.ledger, filter: filterOf(dappId, q) }));
        return reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="ledger-${dappId}.csv"`)
          .header('cache-control', 'no-store')
          .send(stream);
      },
    }),
  ];
}

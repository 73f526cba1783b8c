-- Fewer index entries per signed op (issue 23's benchmark): every sponsorship writes a spend_reservations row, and
-- each index it enters is one more B-tree page the commit writes to SQLite's WAL (~2 µs CPU per index per row at
-- the hot path's batch sizes; PostgreSQL writes each to its WAL too). An index a new row has nothing to say to
-- now leaves it out:
-- - the open reservations the settlement follower releases (spendLedgerRepository.ts, releaseClosed): one index
--   over the rows still reserved, in place of two over every row by window kind. Its query names the status as a
--   literal so that both databases can use the partial index;
-- - the reorg's reopening reads settled rows by their block: a row enters once it has one;
-- - a user's history: rows with an end user (a sponsorship token's `sub`) only.
DROP INDEX spend_reservations_time_window;
DROP INDEX spend_reservations_block_window;
CREATE INDEX spend_reservations_reserved ON spend_reservations (chain_id) WHERE status = 'reserved';
DROP INDEX spend_reservations_settled_block;
CREATE INDEX spend_reservations_settled_block ON spend_reservations (chain_id, settled_block)
  WHERE settled_block IS NOT NULL;
DROP INDEX spend_reservations_dapp_user;
CREATE INDEX spend_reservations_dapp_user ON spend_reservations (dapp_id, end_user, created_at)
  WHERE end_user IS NOT NULL;

-- Portable SQL (SQLite and PostgreSQL). What each included op took from the paymaster's EntryPoint deposit (its
-- UserOperationEvent's actualGasCost, decimal wei), on every close by an inclusion: a settled op, and a token-mode
-- op its user paid for (released, so `actual_wei` stays null: the dApp's ledger did not pay it, but the deposit did).
-- The solvency guard's spend rate and runway are summed from it over the last 24 h (src/solvency/README.md), so every
-- instance sees the same rate and a restart keeps it. Rows closed before this migration have none: the rate counts
-- from the first row that has one.
ALTER TABLE spend_reservations ADD COLUMN deposit_wei TEXT;
-- Partial: the hot path inserts open reservations (deposit_wei null) and never touches this index; the guard reads
-- an hour or two of one paymaster's closes from it, deposit_wei included, without the table.
CREATE INDEX spend_reservations_deposit_spend ON spend_reservations (chain_id, paymaster, closed_at, deposit_wei)
  WHERE deposit_wei IS NOT NULL;

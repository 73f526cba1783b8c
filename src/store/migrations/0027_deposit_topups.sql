-- Portable SQL (SQLite and PostgreSQL). The deposit keeper's ledger (src/keeper/README.md, docs/guides/operations.md
-- "Deposit keeper"): every top-up of a paymaster's EntryPoint deposit it sent, would have sent (a dry run) or
-- proposed to the owner's Safe. The daily limit is summed from here (what was sent over the last 24 h), so it holds
-- across restarts and across instances.
-- mode: 'sent' | 'dry_run' | 'proposed'; state: 'pending' | 'confirmed' | 'failed'. Amounts are decimal strings of
-- wei; addresses and hashes lower-case 0x hex. `proposal`: JSON of the Safe transaction and its Transaction Builder
-- batch (mode 'proposed' only).
CREATE TABLE deposit_topups (
  id TEXT PRIMARY KEY,
  chain_id BIGINT NOT NULL,
  paymaster TEXT NOT NULL,
  entry_point TEXT NOT NULL,
  amount_wei TEXT NOT NULL,
  funder TEXT,
  mode TEXT NOT NULL,
  tx_hash TEXT,
  state TEXT NOT NULL,
  reason TEXT NOT NULL,
  deposit_wei TEXT NOT NULL,
  mark_wei TEXT NOT NULL,
  target_wei TEXT NOT NULL,
  proposal TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX deposit_topups_paymaster_created ON deposit_topups (chain_id, paymaster, created_at);
CREATE INDEX deposit_topups_created ON deposit_topups (created_at);

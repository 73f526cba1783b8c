-- The sponsorship spend ledger (src/store/ledger/spendLedgerRepository.ts, issue 11). One counter row per policy cap
-- and window (`key`, built by src/policies/policyRules.ts): what was spent there (`used`, settled from the
-- chain) and what is promised to signatures not yet settled or expired (`reserved`). Amounts are decimal strings
-- (wei overflows 64 bits: 1,000 ETH is 10^21 wei), added up in the service under the row's lock. A reservation
-- holds the charges of one signed op, so it can be settled by its actual cost or released whole.
CREATE TABLE spend_counters (
  key TEXT PRIMARY KEY,
  dapp_id TEXT NOT NULL REFERENCES dapps (id) ON DELETE CASCADE,
  -- Unix ms when the window ends (NULL: a cap that never resets); rows past it can be deleted.
  window_end BIGINT,
  used TEXT NOT NULL DEFAULT '0',
  reserved TEXT NOT NULL DEFAULT '0'
);
CREATE INDEX spend_counters_dapp_id ON spend_counters (dapp_id);
CREATE INDEX spend_counters_window_end ON spend_counters (window_end);

CREATE TABLE spend_reservations (
  id TEXT PRIMARY KEY,
  dapp_id TEXT NOT NULL REFERENCES dapps (id) ON DELETE CASCADE,
  chain_id BIGINT NOT NULL,
  user_op_hash TEXT,
  -- reserved | settled | released
  status TEXT NOT NULL,
  -- JSON: [{ "key", "unit": "wei" | "usd" | "ops", "amount" }]
  charges TEXT NOT NULL,
  -- Unix ms: the signature's validUntil; a reservation still open then is released.
  expires_at BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  closed_at BIGINT,
  actual_wei TEXT
);
CREATE INDEX spend_reservations_open ON spend_reservations (status, expires_at);
CREATE INDEX spend_reservations_op ON spend_reservations (chain_id, user_op_hash);

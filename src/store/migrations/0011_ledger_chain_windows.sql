-- The spend ledger closes by the chain (issue 20; src/store/ledger/spendLedgerRepository.ts, src/settlement/README.md).
-- A reservation carries the window its signature was issued with, in the chain's own terms: `valid_until` (unix
-- seconds, compared with block.timestamp) or `last_block` (an EntryPoint v0.9 block window's last block, compared
-- with block.number). It is released only once the settlement cursor of its paymaster (`paymaster`, lower-case
-- 0x hex; NULL on rows made before this migration, which any follower of the chain may release) is past that
-- window. `expires_at` (unix ms) stays for the request log and the dashboard.
ALTER TABLE spend_reservations ADD COLUMN paymaster TEXT;
ALTER TABLE spend_reservations ADD COLUMN valid_until BIGINT;
ALTER TABLE spend_reservations ADD COLUMN last_block BIGINT;
-- 'sponsored' (the deposit pays) or 'guarantee' (a token-mode op whose charge is collected after execution:
-- released when its TokenCharged is seen, settled at the op's cost when the deposit paid instead).
ALTER TABLE spend_reservations ADD COLUMN kind TEXT NOT NULL DEFAULT 'sponsored';
-- The block an event closed the reservation in (settled, or a guarantee the user paid), so a reorg that rewinds
-- the cursor below it can reopen it; and what that closure added to each counter's `used` (JSON: {key: amount}),
-- so the reopening takes exactly that back out.
ALTER TABLE spend_reservations ADD COLUMN settled_block BIGINT;
ALTER TABLE spend_reservations ADD COLUMN settled_block_hash TEXT;
ALTER TABLE spend_reservations ADD COLUMN used_charges TEXT;
-- Open rows made before this migration: their window was validUntil in ms for a time window (a block window's
-- was an estimate of its end, which is all that is known of it now).
UPDATE spend_reservations SET valid_until = expires_at / 1000 WHERE status = 'reserved';
DROP INDEX spend_reservations_open;
CREATE INDEX spend_reservations_time_window ON spend_reservations (chain_id, status, valid_until);
CREATE INDEX spend_reservations_block_window ON spend_reservations (chain_id, status, last_block);
CREATE INDEX spend_reservations_settled_block ON spend_reservations (chain_id, settled_block);

-- A dApp's policy version (issue 20): every policy write (create, update, delete) adds one in its own transaction,
-- and a reservation checks, atomically with itself, that the version its request evaluated is still current.
-- Every dApp that has or had a policy has a row; a dApp without one is at version 0.
CREATE TABLE policy_versions (
  dapp_id TEXT PRIMARY KEY REFERENCES dapps (id) ON DELETE CASCADE,
  version BIGINT NOT NULL
);
INSERT INTO policy_versions (dapp_id, version) SELECT DISTINCT dapp_id, 1 FROM policies;

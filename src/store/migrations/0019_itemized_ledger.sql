-- The itemized ledger (issue 23; src/store/ledger/ledgerQueryRepository.ts, docs/guides/ledger.md): every signed
-- sponsorship has a `spend_reservations` row (an op with no cap too: its row holds no charges), and the row now
-- says what a finance team asks of it. Written by the reservation's own INSERT (no query more on the signing path)
-- and by the UPDATE that settles it. NULL on rows made before this migration.
-- Lower-case 0x hex: the op's sender.
ALTER TABLE spend_reservations ADD COLUMN sender TEXT;
-- The end user: a verified sponsorship token's `sub`, when the request carried one.
ALTER TABLE spend_reservations ADD COLUMN end_user TEXT;
-- JSON array of the ids of the policies that applied ('[]': the dApp had none).
ALTER TABLE spend_reservations ADD COLUMN policy_ids TEXT;
-- The op's worst case in wei, as signed (the cap charges may be in USD or ops).
ALTER TABLE spend_reservations ADD COLUMN worst_case_wei TEXT;
-- At settlement: the actual cost in micro-USD at the native price of that moment (NULL: no fresh price), the
-- transaction that included the op, and whether the op succeeded (1) or reverted (0).
ALTER TABLE spend_reservations ADD COLUMN actual_usd_micros TEXT;
ALTER TABLE spend_reservations ADD COLUMN tx_hash TEXT;
ALTER TABLE spend_reservations ADD COLUMN success INTEGER;
-- The ledger's pages are keyset-ordered by (created_at, id) within a dApp; a sender's and a user's history too.
CREATE INDEX spend_reservations_dapp_created ON spend_reservations (dapp_id, created_at, id);
CREATE INDEX spend_reservations_dapp_sender ON spend_reservations (dapp_id, sender, created_at);
CREATE INDEX spend_reservations_dapp_user ON spend_reservations (dapp_id, end_user, created_at);

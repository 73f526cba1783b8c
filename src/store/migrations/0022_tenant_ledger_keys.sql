-- Portable SQL (SQLite and PostgreSQL). Each dApp's spend is its own (issue 31; src/store/ledger/spendLedgerRepository.ts,
-- src/settlement/README.md "Attribution"):
-- `op_key`: the op's key (chain/opKey.ts: chain, EntryPoint, sender, nonce; lower-case 0x hex). A reservation is now
-- keyed by (dApp, op key), its id `<dappId>:<opKey>`: every signature a dApp issues for one (sender, nonce) holds the
-- largest worst case of them in one row (an EntryPoint includes one op per key), and two dApps that signed the same
-- key each have their own row. Settlement finds an included op's rows by it. NULL on rows made before this migration
-- (their ids stay as they were; settlement still finds them by user_op_hash).
ALTER TABLE spend_reservations ADD COLUMN op_key TEXT;
-- `signatures`: the first 16 bytes (r's) of each paymaster signature the row stands for, hex, space-separated, at
-- most 32 (a 33rd signature of one key is refused). When two dApps signed one op key, settlement reads the included
-- op's paymasterAndData and charges the dApp whose signature it carries.
ALTER TABLE spend_reservations ADD COLUMN signatures TEXT;
CREATE INDEX spend_reservations_op_key ON spend_reservations (op_key) WHERE op_key IS NOT NULL;
-- The outbox orders an op's events per dApp: one dApp's undelivered event never holds back another dApp's.
DROP INDEX lifecycle_events_op;
CREATE INDEX lifecycle_events_op ON lifecycle_events (dapp_id, op_key, seq);

-- Portable SQL (SQLite and PostgreSQL). Per dApp: its token guarantees (issue 31; src/config/tokenGuarantees.ts,
-- docs/guides/token-mode.md): JSON { "enabled": boolean, "cap": { "limitWei", "resets" } }, set by the dApp's owner
-- (or the operator). Whether Patron may sign the token mode's mode 2 for the dApp: an op that batches its approval,
-- whose charge can fail after it runs, and then the paymaster's deposit pays its gas.
-- '{}' = off, what every existing dApp keeps: no migration turns a guarantee on for anyone.
ALTER TABLE dapps ADD COLUMN token_guarantees TEXT NOT NULL DEFAULT '{}';

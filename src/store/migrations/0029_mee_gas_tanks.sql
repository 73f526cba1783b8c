-- Portable SQL (SQLite and PostgreSQL). Biconomy MEE gas tanks (issue 35; docs/guides/mee-gas-tanks.md): Nexus
-- accounts holding an ERC-20 (USDC) whose owner key Patron holds, each sponsoring one dApp's supertransactions.
-- Addresses lower-case 0x hex. `signer`: JSON of a reference to the owner key in one of Patron's signer back ends
-- (src/config/tankSignerRef.ts), never a key, a password or a PIN. `low_balance_wei`: the alert threshold in the
-- token's base units (decimal string), NULL for none. Times are unix ms. chain_id is BIGINT: chain ids above 2^31
-- exist. A tank's address is one tank on its chain, whichever dApp registered it first: UNIQUE(chain_id, address)
-- stops a second dApp from claiming a tank it does not own. No ON DELETE CASCADE: a tank that holds money outlives
-- nothing by accident (a retired tank keeps its row).
CREATE TABLE mee_gas_tanks (
  id TEXT PRIMARY KEY,
  dapp_id TEXT NOT NULL REFERENCES dapps (id),
  chain_id BIGINT NOT NULL,
  address TEXT NOT NULL,
  token TEXT NOT NULL,
  token_decimals INTEGER NOT NULL,
  mee_version TEXT NOT NULL,
  signer TEXT NOT NULL,
  owner TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'retired')),
  low_balance_wei TEXT,
  created_at BIGINT NOT NULL,
  retired_at BIGINT,
  UNIQUE (chain_id, address)
);
CREATE INDEX mee_gas_tanks_dapp ON mee_gas_tanks (dapp_id, created_at);

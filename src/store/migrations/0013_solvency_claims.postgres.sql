-- PostgreSQL only (one SQLite file is one service process): the share of a paymaster's deposit each service
-- instance may promise (src/solvency/README.md, "Several instances"). An instance signs only within its own claim;
-- claims are granted under a per-paymaster lock so that, summed over the live ones, they never exceed what the
-- deposit covers (deposit / margin). A claim outlives every signature made under it (expires_at), so a dead
-- instance's promises keep counting until the chain can no longer include them.
CREATE TABLE solvency_claims (
  paymaster_key TEXT NOT NULL,
  instance_id TEXT NOT NULL,
  claimed_wei NUMERIC(78, 0) NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (paymaster_key, instance_id)
);

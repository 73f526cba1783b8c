-- Where the settlement follower (src/settlement/) has read each chain's EntryPoint logs up to, per paymaster:
-- the last block whose UserOperationEvents were settled into the spend ledger, and that block's hash, so a
-- restart resumes after it and a reorg that replaced it is seen (the stored hash no longer matches the chain).
-- Addresses are lower-case 0x hex.
CREATE TABLE chain_cursors (
  chain_id BIGINT NOT NULL,
  entry_point TEXT NOT NULL,
  paymaster TEXT NOT NULL,
  block_number BIGINT NOT NULL,
  block_hash TEXT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (chain_id, entry_point, paymaster)
);

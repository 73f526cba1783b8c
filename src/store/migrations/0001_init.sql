-- Portable SQL: runs unchanged on SQLite and PostgreSQL. Timestamps are integer milliseconds since the epoch,
-- booleans are 0/1 integers (better-sqlite3 cannot bind JS booleans), lists are JSON text.

CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL
);

CREATE TABLE auth_tokens (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  name TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  last_used_at BIGINT,
  revoked_at BIGINT
);

CREATE INDEX auth_tokens_account_id ON auth_tokens (account_id);

CREATE TABLE dapps (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  chain_ids TEXT NOT NULL,
  api_key_hash TEXT NOT NULL UNIQUE,
  api_key_prefix TEXT NOT NULL,
  api_key_ciphertext TEXT NOT NULL,
  lock_version BIGINT NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

CREATE INDEX dapps_account_id ON dapps (account_id);

CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  dapp_id TEXT NOT NULL REFERENCES dapps (id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  request_type TEXT NOT NULL CHECK (request_type IN ('GET', 'POST')),
  active INTEGER NOT NULL CHECK (active IN (0, 1)),
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

CREATE INDEX webhooks_dapp_id ON webhooks (dapp_id);

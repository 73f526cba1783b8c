-- Portable SQL (SQLite and PostgreSQL): the dashboard's sign-in and the paymaster request log.

-- An account owner's dashboard password: scrypt, with its salt and cost parameters in the encoded string
-- (accounts/passwordHash.ts). A table of its own, so no account query can select it by accident.
CREATE TABLE account_passwords (
  account_id TEXT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
  password_hash TEXT NOT NULL,
  updated_at BIGINT NOT NULL
);

-- Dashboard sessions. Only the SHA-256 of the cookie's 256-bit random value is stored: a database leak
-- gives no usable session. Expiry is idle (last_seen_at + idle limit) and absolute (expires_at).
CREATE TABLE dashboard_sessions (
  id TEXT PRIMARY KEY,
  session_hash TEXT NOT NULL UNIQUE,
  account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  last_seen_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);

CREATE INDEX dashboard_sessions_account_id ON dashboard_sessions (account_id);
CREATE INDEX dashboard_sessions_expires_at ON dashboard_sessions (expires_at);

-- Failed sign-ins per email (known or not, so the lock-out says nothing about which emails exist); counted
-- over a sliding window, cleared by a successful sign-in, pruned once older than the window.
CREATE TABLE login_failures (
  email TEXT NOT NULL,
  failed_at BIGINT NOT NULL
);

CREATE INDEX login_failures_email_failed_at ON login_failures (email, failed_at);

-- One row per paymaster JSON-RPC call, written in batches off the request path (requestLog/). No foreign
-- keys: rows are history, written in bulk, and pruned by age and count, not by their dApp's lifetime. `id`
-- (a UUID) only breaks ties in the keyset paging of an account's rows, which the (account_id, at) index
-- finds: a primary-key index on it cost ~25 % of the write (bench/requestLog.ts), so there is none.
CREATE TABLE request_log (
  id TEXT NOT NULL,
  at BIGINT NOT NULL,
  account_id TEXT NOT NULL,
  dapp_id TEXT NOT NULL,
  chain_id BIGINT NOT NULL,
  method TEXT NOT NULL,
  mode TEXT,
  sender TEXT,
  outcome TEXT NOT NULL,
  error_code INTEGER,
  reason TEXT,
  webhook_allowed INTEGER,
  webhook_reason TEXT,
  webhook_latency_ms DOUBLE PRECISION,
  webhook_calls INTEGER,
  latency_ms DOUBLE PRECISION NOT NULL
);

CREATE INDEX request_log_account_at ON request_log (account_id, at);
CREATE INDEX request_log_at ON request_log (at);

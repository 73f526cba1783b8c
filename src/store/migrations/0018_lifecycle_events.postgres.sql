-- PostgreSQL's half of migration 0018 (the SQLite file is the same but for the sequence column): the outbox of
-- the dApps' lifecycle events (src/lifecycleEvents/). `seq` orders the events.
CREATE TABLE lifecycle_events (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The event id: the Standard Webhooks `webhook-id` of every attempt, so a receiver drops redeliveries.
  id TEXT NOT NULL UNIQUE,
  dapp_id TEXT NOT NULL REFERENCES dapps (id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  -- Events of one op key (a user operation: chain, EntryPoint, hash) are delivered in `seq` order.
  op_key TEXT NOT NULL,
  -- The event body as sent (JSON text), fixed when written: a retry or a replay sends the same bytes.
  payload TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  next_attempt_at BIGINT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  -- pending | delivered | failed
  state TEXT NOT NULL DEFAULT 'pending',
  -- Held by the instance delivering it until this time (ms); a crashed instance's claim lapses by itself.
  lease_until BIGINT,
  last_error TEXT,
  delivered_at BIGINT
);
CREATE INDEX lifecycle_events_due ON lifecycle_events (state, next_attempt_at);
CREATE INDEX lifecycle_events_op ON lifecycle_events (op_key, seq);
CREATE INDEX lifecycle_events_dapp ON lifecycle_events (dapp_id, seq);

-- Where a dApp's lifecycle events go: one endpoint per dApp, its Standard Webhooks secret sealed with the master
-- key (accounts/secretBox.ts) like the webhooks' secrets (migration 0002).
CREATE TABLE dapp_event_endpoints (
  dapp_id TEXT PRIMARY KEY REFERENCES dapps (id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  signing_secret_ciphertext TEXT NOT NULL,
  active INTEGER NOT NULL DEFAULT 1,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

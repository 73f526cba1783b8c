-- Portable SQL (SQLite and PostgreSQL). The lifecycle events' outbox (migration 0018) learns what the later
-- events need (issue 23, docs/guides/lifecycle-events.md):
-- `dedupe_key`: an event that must be written once however many instances or re-reads produce it (a cap's
-- threshold per window, an op's expiry, an inclusion or a reorg per block). The unique index makes the second
-- insert a no-op (ON CONFLICT DO NOTHING); NULL (sponsorship.signed) is never a conflict.
ALTER TABLE lifecycle_events ADD COLUMN dedupe_key TEXT;
CREATE UNIQUE INDEX lifecycle_events_dedupe ON lifecycle_events (dedupe_key);
-- `ref`: the spend reservation a `sponsorship.signed` event was written for (its id), so the ledger's release of
-- that reservation writes `sponsorship.expired` in its own transaction.
ALTER TABLE lifecycle_events ADD COLUMN ref TEXT;
CREATE INDEX lifecycle_events_ref ON lifecycle_events (ref);
-- The chain and block of a `sponsorship.included` event, so a reorg finds the inclusions it removed.
ALTER TABLE lifecycle_events ADD COLUMN chain_id INTEGER;
ALTER TABLE lifecycle_events ADD COLUMN block_number BIGINT;
ALTER TABLE lifecycle_events ADD COLUMN block_hash TEXT;
CREATE INDEX lifecycle_events_block ON lifecycle_events (chain_id, block_number);

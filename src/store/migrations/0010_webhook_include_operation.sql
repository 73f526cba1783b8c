-- Portable SQL (SQLite and PostgreSQL). Per webhook: whether its call also carries the operation it is asked to
-- approve (the op with its final gas limits, the chain, the EntryPoint, the dApp, the policies, the worst-case
-- cost; docs/guides/webhooks.md, "Webhooks"). Off by default, so existing webhooks keep receiving exactly the spec's `{data}` body.
-- Only POST webhooks may turn it on (webhookService.ts): a GET call's signature does not cover its query string.
ALTER TABLE webhooks ADD COLUMN include_operation INTEGER NOT NULL DEFAULT 0 CHECK (include_operation IN (0, 1));

-- Portable SQL (SQLite and PostgreSQL). Each webhook's Standard Webhooks signing secret
-- (https://www.standardwebhooks.com/), sealed with the master key by accounts/secretBox.ts.
--
-- Nullable, and deliberately not backfilled here: sealing needs the master key, which SQL does not have.
-- Webhooks created before this migration get a secret lazily, the first time they are about to be called
-- (webhookService.activeWebhooks, a compare-and-set on `IS NULL`, so concurrent processes agree on one);
-- their owner learns it through the admin rotate-secret route.
ALTER TABLE webhooks ADD COLUMN signing_secret_ciphertext TEXT;

-- Portable SQL (SQLite and PostgreSQL). Per dApp: who may call its paymaster URL (JSON, src/config/callerRestrictions.ts):
-- allowed origins, client IP ranges and method families, set by the dApp's owner (docs/guides/security-keys.md).
-- '{}' = no restriction, what every existing dApp keeps.
ALTER TABLE dapps ADD COLUMN caller_restrictions TEXT NOT NULL DEFAULT '{}';

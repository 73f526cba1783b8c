-- Portable SQL (SQLite and PostgreSQL). Sponsorship tokens from the dApp's backend (issue 23,
-- docs/guides/sponsorship-tokens.md).
-- Per dApp, JSON: { "required": boolean, "keys": [registered keys] } (src/sponsorshipTokens/registeredKeys.ts),
-- set by the dApp's owner. '{}' = tokens not required and no keys, what every existing dApp keeps.
ALTER TABLE dapps ADD COLUMN sponsorship_tokens TEXT NOT NULL DEFAULT '{}';

-- Spent token ids (jti), kept until the token expires (Unix seconds, exp plus the clock skew). The primary key makes
-- a spend exact across processes: of two inserts of one (dapp_id, jti) exactly one succeeds; an expired row is
-- taken over by the same statement (ON CONFLICT … WHERE expires_at < now), and swept periodically.
CREATE TABLE sponsorship_token_uses (
  dapp_id TEXT NOT NULL REFERENCES dapps (id) ON DELETE CASCADE,
  jti TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (dapp_id, jti)
);
CREATE INDEX sponsorship_token_uses_expires_at ON sponsorship_token_uses (expires_at);

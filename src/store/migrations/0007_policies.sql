-- A dApp's sponsorship policies (issue 11; the rules' format is src/policies/policySchema.ts). The rules are
-- stored as the JSON the owner sent, validated; the service parses them on read. Names are unique per dApp so
-- that the CLI, the dashboard and a request's `sponsorshipPolicyId` can refer to one without ambiguity.
CREATE TABLE policies (
  id TEXT PRIMARY KEY,
  dapp_id TEXT NOT NULL REFERENCES dapps (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  active INTEGER NOT NULL CHECK (active IN (0, 1)),
  rules TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  UNIQUE (dapp_id, name)
);

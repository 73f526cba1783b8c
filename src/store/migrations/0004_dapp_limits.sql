-- Operator-set limits of a dApp (JSON, src/config/dappLimits.ts): overrides of the signing bounds, and of
-- the rate limits. '{}' = the deployment's (and the chain's) values.
ALTER TABLE dapps ADD COLUMN limits TEXT NOT NULL DEFAULT '{}';

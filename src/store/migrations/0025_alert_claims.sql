-- Portable SQL (SQLite and PostgreSQL). Which state of each operator alert's subject was last posted, and when
-- (src/store/db/alertClaims.ts, docs/guides/operations.md "Alerts"): every instance sharing the database runs the
-- solvency guard and the signer watch, and each sees the same transition; only the one whose upsert moves the row
-- to the new state posts it. `subject`: the alert family with its chain and paymaster (and signer, where the alert
-- names one), e.g. `paymaster.solvency:8453:0xabc…`; `state`: the type's last segment (`low`, `halted`, `recovered`).
CREATE TABLE alert_claims (
  subject TEXT PRIMARY KEY,
  state TEXT NOT NULL,
  posted_at BIGINT NOT NULL
);

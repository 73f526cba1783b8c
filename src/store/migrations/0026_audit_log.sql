-- Portable SQL (SQLite and PostgreSQL): the people of an account's team with their roles, and the audit log of
-- every change made through the admin API (docs/guides/dashboard.md, "Team and roles"; "Audit log").

-- A member signs in with their own email and password and acts on the account's dApps with their role. The
-- email is unique over all members, since sign-in finds the member (and so the team) by it.
CREATE TABLE account_members (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  email TEXT NOT NULL UNIQUE,
  role TEXT NOT NULL CHECK (role IN ('owner', 'operator', 'viewer')),
  created_at BIGINT NOT NULL
);

CREATE INDEX account_members_account_id ON account_members (account_id);

-- Every existing account becomes a team of one: its own login, as owner. The member takes the account's id, so
-- the existing password, sessions and auth tokens carry over as that owner's below.
INSERT INTO account_members (id, account_id, email, role, created_at)
SELECT id, id, email, 'owner', created_at FROM accounts;

-- A member's dashboard password (scrypt, accounts/passwordHash.ts), in a table of its own as before (0003), so no
-- member query can select it by accident. The accounts' passwords move over to their owners.
CREATE TABLE member_passwords (
  member_id TEXT PRIMARY KEY REFERENCES account_members (id) ON DELETE CASCADE,
  password_hash TEXT NOT NULL,
  updated_at BIGINT NOT NULL
);

INSERT INTO member_passwords (member_id, password_hash, updated_at)
SELECT account_id, password_hash, updated_at FROM account_passwords;

DROP TABLE account_passwords;

-- Whose session and whose token: the role is the member's, read on every request (a changed role applies at once).
-- No foreign key: removing a member revokes their tokens (kept, revoked, for the record) and ends their sessions
-- in the same transaction (store/tenants/memberRepository.ts).
ALTER TABLE dashboard_sessions ADD COLUMN member_id TEXT;
UPDATE dashboard_sessions SET member_id = account_id;

ALTER TABLE auth_tokens ADD COLUMN member_id TEXT;
UPDATE auth_tokens SET member_id = account_id;

CREATE INDEX auth_tokens_member_id ON auth_tokens (member_id);

-- One row per change through the admin API: who (member, with their email as it was, and the auth token when a
-- token made the call), what (action, target), the before and after documents (JSON, secrets redacted before
-- they are written: accounts/auditRedaction.ts), when, and the request id of the access log. No foreign keys: rows are
-- history and outlive a removed member or a deleted policy. Scoped by account (and dApp, where the change was one
-- dApp's): the admin API reads only the caller's account's rows.
CREATE TABLE audit_log (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  dapp_id TEXT,
  at BIGINT NOT NULL,
  member_id TEXT,
  member_email TEXT NOT NULL,
  auth_token_id TEXT,
  action TEXT NOT NULL,
  target_id TEXT,
  before_json TEXT,
  after_json TEXT,
  request_id TEXT
);

CREATE INDEX audit_log_account_at ON audit_log (account_id, at, id);

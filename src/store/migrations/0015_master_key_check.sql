-- Portable SQL (SQLite and PostgreSQL). One row: a value only the right master key reproduces (an HMAC of a fixed
-- label, accounts/masterKey.ts), so a start with another PATRON_MASTER_KEY is refused at once, even on a database
-- that holds no secret yet, instead of failing later on the first secret it opens. Not filled here: SQL has no key;
-- the first start with a key writes it (after checking that key against a secret already stored, if any).
CREATE TABLE patron_master_key_check (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  check_value TEXT NOT NULL,
  written_at BIGINT NOT NULL
);

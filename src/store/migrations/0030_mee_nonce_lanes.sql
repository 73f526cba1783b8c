-- Portable SQL (SQLite and PostgreSQL). The 2D-nonce lanes Patron hands out for its MEE gas tanks (src/mee/README.md,
-- docs/guides/mee-sponsorship.md): one lane per quote, so parallel quotes never share a nonce, allocated from here so
-- that several instances on one database never hand out the same lane.
-- mee_nonce_counters: per tank, how many lanes were ever allocated (monotonic; the lane is that count modulo 2^24,
-- the 3 bytes a Nexus nonce key leaves for it).
-- mee_nonce_lanes: per tank and lane, the last allocation: the dApp it was handed to, the nonce read from the
-- EntryPoint for that key (a decimal string), when; signed_at once a quote was signed with it (each lane signs once).
CREATE TABLE mee_nonce_counters (
  tank_id TEXT PRIMARY KEY,
  allocated BIGINT NOT NULL
);
CREATE TABLE mee_nonce_lanes (
  tank_id TEXT NOT NULL,
  lane BIGINT NOT NULL,
  dapp_id TEXT NOT NULL,
  nonce TEXT NOT NULL,
  allocated_at BIGINT NOT NULL,
  signed_at BIGINT,
  PRIMARY KEY (tank_id, lane)
);

-- Rate-limit counts shared by every process on one PostgreSQL database (src/rateLimit/rateLimiter.ts, through
-- rate-limiter-flexible's PostgreSQL store, whose table layout this is: a key, the points spent in its
-- current window, and when that window ends in ms). Unused on SQLite, where one process counts in memory.
-- `key` is TEXT, not the library's VARCHAR(255): a key may hold a 254-character email behind its prefix.
CREATE TABLE rate_limits (
  key TEXT PRIMARY KEY,
  points INTEGER NOT NULL DEFAULT 0,
  expire BIGINT
);

-- Failed dashboard logins, one row per client address and one ('*') for all addresses together,
-- so repeated failures are slowed down across isolates that share no memory. Each login attempt
-- is one statement that checks and records at once, and removes a few rows whose last failure is
-- older than an hour, so the table holds only the addresses that failed recently.
-- A new table: code that predates it never reads or writes it.
CREATE TABLE {{prefix}}login_throttle (
  -- An IPv4 address, an IPv6 /64 prefix, 'unknown' (no trusted address), or '*' (all addresses).
  key           text PRIMARY KEY,
  -- Failures counted since the key was last reset (a correct password, or an hour without failures).
  failures      integer NOT NULL,
  -- No login from this key is checked before this time.
  blocked_until timestamptz NOT NULL,
  -- The last counted failure; 'epoch' after a correct password, so the row is cleaned up first.
  updated_at    timestamptz NOT NULL
);
CREATE INDEX {{prefix}}login_throttle_updated_idx ON {{prefix}}login_throttle (updated_at);

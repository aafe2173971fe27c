-- Dashboard sessions ended by logging out. A session is a signed cookie that needs no table; without
-- this one, a cookie copied before its owner logged out kept working until it expired (12 hours by
-- default). A row holds a SHA-256 of the session's random token, never the token, until the session
-- would have expired anyway; each logout removes a few rows past that, so the table holds only live ones.
-- A new table: code that predates it never reads or writes it.
CREATE TABLE {{prefix}}dashboard_logouts (
  session    text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);
CREATE INDEX {{prefix}}dashboard_logouts_expires_idx ON {{prefix}}dashboard_logouts (expires_at);

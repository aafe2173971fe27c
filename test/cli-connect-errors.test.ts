// How the CLI reads a connection that fails before any statement: the exit code and the one line.
import { describe, expect, it } from "vitest";
import { connectTimeoutMs } from "../src/cli/session.js";
import { EXIT, exitCodeFor, oneLine } from "../src/exit-codes.js";

describe("a connection whose TLS fails", () => {
  it("is configuration (exit 6, 'cannot connect', and why), as the API calls it, not a failed command (exit 1) nor an outage to retry (exit 7)", () => {
    for (const e of [
      new Error("The server does not support SSL connections"),
      Object.assign(new Error("self-signed certificate in certificate chain"), { code: "SELF_SIGNED_CERT_IN_CHAIN" }),
      Object.assign(new Error("unable to verify the first certificate"), { code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" }),
    ]) {
      expect(exitCodeFor(e), e.message).toBe(EXIT.config);
      expect(oneLine(e)).toBe(`cannot connect to the database: ${e.message} (its TLS failed: see DATABASE_URL's sslmode)`);
    }
    // So are a refused login and a database that does not exist: a script that retries exit 7 retried them for ever.
    const login = Object.assign(new Error('password authentication failed for user "app"'), { code: "28P01" });
    const missing = Object.assign(new Error('database "nope" does not exist'), { code: "3D000" });
    expect([exitCodeFor(login), oneLine(login)]).toEqual([EXIT.config, `cannot connect to the database: ${login.message} (DATABASE_URL's role or password is refused)`]);
    expect([exitCodeFor(missing), oneLine(missing)]).toEqual([EXIT.config, `cannot connect to the database: ${missing.message} (DATABASE_URL's database does not exist)`]);
    // A statement's own error that mentions SSL is not one.
    expect(exitCodeFor(Object.assign(new Error('column "ssl" does not exist'), { code: "42703" }))).toBe(EXIT.failed);
  });
});

describe("connect_timeout", () => {
  it("is read as libpq reads it: seconds, and 0 for no limit (it was the 10 s default)", () => {
    expect(connectTimeoutMs("postgres://u@h/db?connect_timeout=3")).toBe(3_000);
    expect(connectTimeoutMs("postgres://u@h/db?connect_timeout=0")).toBe(0);
    expect(connectTimeoutMs("postgres://u@h/db")).toBe(10_000);
    expect(connectTimeoutMs("postgres://u@h/db?connect_timeout=soon")).toBe(10_000);
  });
});

describe("a statement the server gave up", () => {
  it("says so, not that the database could not be reached (it was: statement_timeout, lock_timeout)", () => {
    const timedOut = Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" });
    expect(oneLine(timedOut)).toBe("the database gave the statement up: canceling statement due to statement timeout");
    const locked = Object.assign(new Error("canceling statement due to lock timeout"), { code: "55P03" });
    expect(oneLine(locked)).toBe("the database gave the statement up: canceling statement due to lock timeout");
    expect(oneLine(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }))).toMatch(/^cannot connect to the database/);
  });
});

describe("the exit code of what the server refused", () => {
  it("a lock timeout exits 7 as a statement timeout does (the API answers both 503); a read-only database or a role without rights is configuration (6), said as such", () => {
    const timedOut = Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" });
    const locked = Object.assign(new Error("canceling statement due to lock timeout"), { code: "55P03" });
    expect([exitCodeFor(timedOut), exitCodeFor(locked)]).toEqual([EXIT.unreachable, EXIT.unreachable]);
    const readOnly = Object.assign(new Error("cannot execute SELECT in a read-only transaction"), { code: "25006" });
    expect(exitCodeFor(readOnly)).toBe(EXIT.config);
    expect(oneLine(readOnly)).toBe("cannot execute SELECT in a read-only transaction (DATABASE_URL's database takes no writes: a standby or read replica, or default_transaction_read_only)");
    const denied = Object.assign(new Error("permission denied for table jobs_queue"), { code: "42501" });
    expect(exitCodeFor(denied)).toBe(EXIT.config);
    expect(oneLine(denied)).toBe("permission denied for table jobs_queue (its database role may not use a table it needs)");
  });
});

// The local SQL-over-HTTP endpoint is only worth testing against if it fails where
// Neon's proxy fails: these check its limits, its one-statement rule and its error
// bodies on the wire, and what the real driver (`neon()`) makes of each.
import { neon, neonConfig, type NeonDbError } from "@neondatabase/serverless";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { harness } from "./support/harness.js";
import { NEON_MAX_REQUEST_BYTES, NEON_MAX_RESPONSE_BYTES, type NeonHttp, startNeonHttp } from "./support/neon-http.js";

const h = await harness("neon_standin");
const MiB = 1024 * 1024;

let standIn: NeonHttp;
let small: NeonHttp;
beforeAll(async () => {
  standIn = await startNeonHttp();
  small = await startNeonHttp({ maxRequestBytes: 2_000, maxResponseBytes: 2_000 });
});
afterAll(async () => {
  await standIn?.close();
  await small?.close();
});

/** What `neon()` sends: POST /sql with the connection string and the raw-text, array-mode headers. */
const post = (endpoint: string, body: string) =>
  fetch(endpoint, {
    method: "POST",
    headers: { "Neon-Connection-String": h.url, "Neon-Raw-Text-Output": "true", "Neon-Array-Mode": "true" },
    body,
  });

/** The driver pointed at a stand-in (its endpoint setting is global, so each call sets it). */
const driver = (served: NeonHttp) => {
  neonConfig.fetchEndpoint = served.endpoint;
  return neon(h.url);
};

const rejection = async (promise: Promise<unknown>): Promise<NeonDbError> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as NeonDbError;
};

// Every key of the proxy's error body (sql_over_http.rs, `handle`).
const ERROR_KEYS = ["message", "code", "detail", "hint", "position", "internalPosition", "internalQuery", "severity", "where", "table", "column", "schema", "dataType", "constraint", "file", "line", "routine"];
const proxyError = (message: string) => ({
  ...Object.fromEntries(ERROR_KEYS.map((k) => [k, null])),
  message,
  code: "",
  severity: "",
});

describe("the Neon SQL-over-HTTP stand-in", () => {
  it("answers one statement in the proxy's result shape", async () => {
    const res = await post(standIn.endpoint, JSON.stringify({ query: "SELECT $1::int AS n, NULL::text AS t", params: ["7"] }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      rowAsArray: true,
      fields: [
        expect.objectContaining({ name: "n", dataTypeID: 23, format: "text" }),
        expect.objectContaining({ name: "t", dataTypeID: 25, format: "text" }),
      ],
      rows: [["7", null]],
      command: "SELECT",
      rowCount: 1,
    });
    expect(await driver(standIn).query("SELECT $1::int AS n", [7])).toEqual([{ n: 7 }]);
  });

  it("refuses a string of several statements with 42601, as the proxy's extended-protocol parse does, and runs none of it", async () => {
    await h.db.query("CREATE TABLE standin_touched (n int)");
    const text = "INSERT INTO standin_touched VALUES (1); SELECT 2";
    const res = await post(standIn.endpoint, JSON.stringify({ query: text, params: [] }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual([...ERROR_KEYS].sort());
    expect(body).toMatchObject({ message: "cannot insert multiple commands into a prepared statement", code: "42601", severity: "ERROR" });
    // The driver turns a 400 into a NeonDbError carrying the body's fields.
    const e = await rejection(driver(standIn).query(text));
    expect(e.name).toBe("NeonDbError");
    expect(e).toMatchObject({ message: "cannot insert multiple commands into a prepared statement", code: "42601" });
    expect(await h.rows("SELECT * FROM standin_touched")).toEqual([]);
  });

  it("reports a PostgreSQL error with its fields, absent ones null", async () => {
    const res = await post(standIn.endpoint, JSON.stringify({ query: "SELECT nope FROM standin_none", params: [] }));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "42P01", severity: "ERROR", position: "18", detail: null, hint: null, routine: expect.any(String) });
  });

  it("refuses a request body over 10 MiB with 413, by Content-Length and by the bytes sent", async () => {
    const over = JSON.stringify({ query: "SELECT length($1::text)", params: ["x".repeat(NEON_MAX_REQUEST_BYTES)] });
    const res = await post(standIn.endpoint, over);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual(proxyError(`request is too large (max is ${NEON_MAX_REQUEST_BYTES} bytes)`));
    // Sent in chunks without Content-Length, the count while reading refuses it the same way.
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        const bytes = new TextEncoder().encode(over);
        for (let i = 0; i < bytes.length; i += MiB) controller.enqueue(bytes.subarray(i, i + MiB));
        controller.close();
      },
    });
    const streamed = await fetch(standIn.endpoint, { method: "POST", headers: { "Neon-Connection-String": h.url }, body: chunked, duplex: "half" } as RequestInit);
    expect(streamed.status).toBe(413);
    // What the driver makes of it: not a 400, so a NeonDbError holding the status and the body, no code.
    const e = await rejection(driver(standIn).query("SELECT length($1::text)", ["x".repeat(NEON_MAX_REQUEST_BYTES)]));
    expect(e.message).toMatch(/^Server error \(HTTP status 413\): \{"message":"request is too large \(max is 10485760 bytes\)"/);
    expect(e.code).toBeUndefined();
    // Just under the limit is answered.
    const fits = "x".repeat(NEON_MAX_REQUEST_BYTES - 100);
    expect(await driver(standIn).query("SELECT length($1::text) AS n", [fits])).toEqual([{ n: fits.length }]);
  });

  it("stops a response that passes 10 MiB as rows are added, with 507", async () => {
    const rows = (n: number) => `SELECT repeat('x', ${MiB}) AS blob FROM generate_series(1, ${n})`;
    // Nine 1 MiB rows fit; the tenth takes the buffer past 10 MiB.
    expect(await driver(standIn).query(rows(9))).toHaveLength(9);
    const res = await post(standIn.endpoint, JSON.stringify({ query: rows(10), params: [] }));
    expect(res.status).toBe(507);
    expect(await res.json()).toEqual(proxyError(`response is too large (max is ${NEON_MAX_RESPONSE_BYTES} bytes)`));
    const e = await rejection(driver(standIn).query(rows(10)));
    expect(e.message).toMatch(/^Server error \(HTTP status 507\): \{"message":"response is too large \(max is 10485760 bytes\)"/);
    expect(e.code).toBeUndefined();
  });

  it("counts a transaction's whole response against the limit, and rolls it back when it passes", async () => {
    await h.db.query("CREATE TABLE standin_batch (n int)");
    const sql = driver(standIn);
    const half = `SELECT repeat('x', ${6 * MiB}) AS blob`;
    const e = await rejection(sql.transaction([sql.query("INSERT INTO standin_batch VALUES (1)"), sql.query(half), sql.query(half)]));
    expect(e.message).toMatch(/HTTP status 507/);
    expect(await h.rows("SELECT * FROM standin_batch")).toEqual([]);
    const [inserted, one] = await sql.transaction([sql.query("INSERT INTO standin_batch VALUES (2) RETURNING n"), sql.query(half)]);
    expect(inserted).toEqual([{ n: 2 }]);
    expect((one as Array<{ blob: string }>)[0]!.blob).toHaveLength(6 * MiB);
  });

  it("takes its limits from its options, for tests that need them small", async () => {
    const sql = driver(small);
    expect(await sql.query("SELECT repeat('x', 900) AS a")).toHaveLength(1);
    expect((await rejection(sql.query("SELECT repeat('x', 900) AS a FROM generate_series(1, 3)"))).message).toMatch(
      /^Server error \(HTTP status 507\): \{"message":"response is too large \(max is 2000 bytes\)"/,
    );
    expect((await rejection(sql.query("SELECT length($1::text)", ["x".repeat(2_000)]))).message).toMatch(
      /^Server error \(HTTP status 413\): \{"message":"request is too large \(max is 2000 bytes\)"/,
    );
  });

  it("answers a body that is not a query with 400, as the proxy does", async () => {
    for (const body of ["not json", JSON.stringify({ sql: "SELECT 1" })]) {
      const res = await post(standIn.endpoint, body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(/^could not parse the HTTP request body: /);
    }
  });
});

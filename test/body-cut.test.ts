// A client that goes away while its body is being read (the connection reset) is neither a database outage
// nor a fault of the server: it was answered 503 and logged as "the database is unavailable".
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../src/http/index.js";
import { defineJob, memoryLogger } from "../src/index.js";
import { PASSWORD } from "./support/browser.js";
import { harness } from "./support/harness.js";

const h = await harness("body_cut");
const note = defineJob({ name: "note", schema: z.object({ text: z.string() }), handler: () => {} });
const TOKEN = "api-token-for-tests-0123456789abcdef";

/** A body whose connection resets after its first bytes, as Node's request stream does. */
const cutBody = () =>
  new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode('{"job":"note","payload":{"text":"'));
      c.error(Object.assign(new Error("aborted"), { code: "ECONNRESET" }));
    },
  });

describe("a request body cut off by its client", () => {
  it("is the client's doing on the API and the dashboard: a 400, nothing logged as a fault, nothing stored", async () => {
    const jobs = await h.isolated([note]);
    const logger = memoryLogger();
    const app = createApp({ jobs, env: { JOBS_API_TOKEN: TOKEN, DASHBOARD_PASSWORD: PASSWORD }, logger });
    const res = await app.request("http://x/api/jobs", {
      method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: cutBody(), duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(400);
    const form = await app.request("http://x/dashboard/login", {
      method: "POST", headers: { origin: "http://x", "content-type": "application/x-www-form-urlencoded" }, body: cutBody(), duplex: "half",
    } as RequestInit);
    expect(form.status).toBe(400);
    expect(logger.entries.filter((e) => e.level === "warn" || e.level === "error")).toEqual([]);
    const [row] = await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${jobs.tables.queue}`);
    expect(row!.n).toBe(0);
  });
});

// The API and the dashboard as the edge function runs them: every statement through
// `neon()` to the local SQL-over-HTTP endpoint, which keeps Neon's limits. A list
// page of large payloads must fit in one response (10 MiB); rows carry a preview of
// their payload and the detail routes the payload.
import { neon, neonConfig } from "@neondatabase/serverless";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { randomBytes } from "node:crypto";
import { createApp } from "../src/http/index.js";
import { createJobs, type Db, defineJob, fromNeonHttp, silentLogger } from "../src/index.js";
import { listDeadLetters } from "../src/store/admin/dead-letters-list.js";
import { listJobs } from "../src/store/admin/jobs-list.js";
import { PAYLOAD_PREVIEW_CHARS } from "../src/store/admin/views.js";
import { API_TOKENS, caller } from "./http-support.js";
import { PASSWORD } from "./support/browser.js";
import { harness } from "./support/harness.js";
import { type NeonHttp, startNeonHttp } from "./support/neon-http.js";

const h = await harness("neon_lists");
let standIn: NeonHttp;
beforeAll(async () => {
  standIn = await startNeonHttp();
  neonConfig.fetchEndpoint = standIn.endpoint;
});
afterAll(async () => {
  await standIn?.close();
});

const blob = defineJob({ name: "blob", schema: z.object({ blob: z.string() }), handler: () => {} });
const note = defineJob({ name: "note", schema: z.object({ text: z.string() }), handler: () => {} });
const jobs = createJobs({ db: fromNeonHttp(neon(h.url)), jobs: [blob, note], logger: silentLogger });
const app = createApp({ jobs, env: { JOBS_API_TOKEN: API_TOKENS, DASHBOARD_PASSWORD: PASSWORD } });
const call = caller(app);

const ORIGIN = "http://dash.test";
const dashboard = async () => {
  const res = await app.request(`${ORIGIN}/dashboard/login`, {
    method: "POST",
    headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ password: PASSWORD, next: "/dashboard/" }),
  });
  expect(res.status).toBe(303);
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  return async (path: string) => {
    const page = await app.request(`${ORIGIN}/dashboard${path}`, { headers: { cookie } });
    return { status: page.status, text: await page.text() };
  };
};

/** The payload's JSON text as PostgreSQL writes it: what previews are cut from. */
const storedText = async (table: "jobs_queue" | "jobs_dead_letters", id: string) =>
  (await h.rows<{ t: string }>(`SELECT payload::text AS t FROM ${table} WHERE id = $1`, [id]))[0]!.t;

const BLOB = 900_000;

describe("list pages over neon(), within Neon's response limit", () => {
  it("answers a page of twelve ~900 KB payloads with previews, and the detail routes with the payload", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await call("POST", "/api/jobs", { json: { job: "blob", payload: { blob: `${i}`.padEnd(BLOB, "x") }, delayMs: 600_000 } });
      expect(r.status).toBe(201);
      ids.push(r.body.id);
    }
    await h.db.query(
      `INSERT INTO jobs_dead_letters (id, job_name, payload, attempts, max_attempts, reason, last_error, created_at)
       SELECT gen_random_uuid(), job_name, payload, 1, 1, 'permanent', 'broken', created_at FROM jobs_queue`,
    );
    const text = await storedText("jobs_queue", ids[0]!);
    expect(text.length).toBe(BLOB + 12); // {"blob": "..."}

    const list = await call("GET", "/api/jobs?limit=500");
    expect(list.status).toBe(200);
    expect(list.body.items.map((j: { id: string }) => j.id)).toEqual([...ids].reverse());
    const last = list.body.items[11];
    expect(last).not.toHaveProperty("payload");
    // Stored in more than 8 KB: outlined, not written out (its size unmeasured).
    expect(last).toMatchObject({ id: ids[0], status: "queued", payloadPreview: '{"blob": …}', payloadBytes: null, payloadTruncated: true });

    const dead = await call("GET", "/api/dead-letters?limit=500");
    expect(dead.status).toBe(200);
    expect(dead.body.items).toHaveLength(12);
    for (const d of dead.body.items) {
      expect(d).not.toHaveProperty("payload");
      expect(d).toMatchObject({ job: "blob", reason: "permanent", payloadBytes: null, payloadTruncated: true });
      expect(d.payloadPreview).toBe('{"blob": …}');
    }

    const one = await call("GET", `/api/jobs/${ids[0]}`);
    expect(one.status).toBe(200);
    expect(one.body.payload).toEqual({ blob: "0".padEnd(BLOB, "x") });
    const deadOne = await call("GET", `/api/dead-letters/${dead.body.items[0].id}`);
    expect(deadOne.status).toBe(200);
    expect(deadOne.body.payload.blob).toHaveLength(BLOB);

    const page = await dashboard();
    for (const path of ["/jobs", "/dead-letters"]) {
      const res = await page(path);
      expect(res.status).toBe(200);
      // Each row shows the start of its payload and its size, never the payload itself.
      // An outline is whole as it is: no ellipsis after it (it read {"blob": …}…).
      expect(res.text).toContain(`{&quot;blob&quot;: …}</code>`);
      expect(res.text.split("over 8 KB").length - 1).toBe(12);
      expect(res.text.length).toBeLessThan(200_000);
    }
    const detail = await page(`/jobs/${ids[0]}`);
    expect(detail.status).toBe(200);
    expect(detail.text).toContain("x".repeat(BLOB - 2));
    const deadDetail = await page(`/dead-letters/${dead.body.items[0].id}`);
    expect(deadDetail.status).toBe(200);
    // Payloads 10 and 11 start with two digits.
    expect(deadDetail.text).toContain("x".repeat(BLOB - 2));

    await h.db.query("DELETE FROM jobs_queue");
    await h.db.query("DELETE FROM jobs_dead_letters");
  });

  it("cuts previews at characters, not bytes, and counts the size in UTF-8 bytes", async () => {
    const short = { text: `a "quoted" \\ line\nand 日本語 🎉` };
    const long = { text: "🎉".repeat(400) };
    const a = (await call("POST", "/api/jobs", { json: { job: "note", payload: short, delayMs: 600_000 } })).body.id as string;
    const b = (await call("POST", "/api/jobs", { json: { job: "note", payload: long, delayMs: 600_000 } })).body.id as string;
    const items = (await call("GET", "/api/jobs?job=note")).body.items as Array<Record<string, unknown>>;
    const byId = new Map(items.map((j) => [j.id, j]));
    const shortText = await storedText("jobs_queue", a);
    // Whole, the preview is the payload's JSON text: it parses back to the payload.
    expect(byId.get(a)).toMatchObject({ payloadPreview: shortText, payloadBytes: Buffer.byteLength(shortText), payloadTruncated: false });
    expect(JSON.parse(byId.get(a)!.payloadPreview as string)).toEqual(short);
    const longText = await storedText("jobs_queue", b);
    expect(byId.get(b)).toMatchObject({
      payloadPreview: [...longText].slice(0, PAYLOAD_PREVIEW_CHARS).join(""),
      payloadBytes: Buffer.byteLength(longText),
      payloadTruncated: true,
    });
    await h.db.query("DELETE FROM jobs_queue");
  });

  // Writing a page of 1 MB payloads out to cut their previews took a second a poll (about 17 ms a megabyte).
  it("outlines a payload stored in more than 8 KB: its keys, its length, or a long string's start", async () => {
    const hex = (n: number) => randomBytes(n / 2).toString("hex");
    const big = { id: 7, meta: Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`k${i}`, hex(8)])), note: hex(20_000), items: [hex(10_000)], title: "t" };
    const list = [hex(12_000), 1, { x: 1 }];
    const text = hex(12_000);
    // 450 KB of JSON that compresses to under 8 KB as stored: large all the same (it was written out, 4 ms a row).
    const records = Array.from({ length: 8_500 }, () => ({ status: "ok", value: 1, region: "eu-west-1" }));
    await h.db.query(
      `INSERT INTO jobs_queue (id, job_name, payload, run_at)
       SELECT gen_random_uuid(), j, p, now() + interval '1 hour' FROM unnest($1::text[], $2::jsonb[]) AS x(j, p)`,
      [["a", "b", "c", "d"], [JSON.stringify(big), JSON.stringify(list), JSON.stringify(text), JSON.stringify(records)]],
    );
    const byJob = new Map((await listJobs(h.db, jobs.tables, {})).items.map((j) => [j.job, j]));
    // jsonb keeps an object's keys shortest first.
    expect(byJob.get("a")).toMatchObject({ payloadBytes: null, payloadTruncated: true, payloadPreview: '{"id": …, "meta": …, "note": …, "items": …, "title": …}' });
    expect(byJob.get("b")).toMatchObject({ payloadBytes: null, payloadTruncated: true, payloadPreview: "[3 items]" });
    expect(byJob.get("c")).toMatchObject({ payloadBytes: null, payloadTruncated: true, payloadPreview: `"${text}`.slice(0, PAYLOAD_PREVIEW_CHARS) });
    expect(await h.rows(`SELECT pg_column_size(payload) < 8192 AS compressed FROM jobs_queue WHERE job_name = 'd'`)).toEqual([{ compressed: true }]);
    expect(byJob.get("d")).toMatchObject({ payloadBytes: null, payloadTruncated: true, payloadPreview: "[8500 items]" });
    await h.db.query("DELETE FROM jobs_queue");
  });

  it("documents in OpenAPI exactly the fields the lists and the detail routes answer with", async () => {
    const id = (await call("POST", "/api/jobs", { json: { job: "note", payload: { text: "doc" }, delayMs: 600_000 } })).body.id as string;
    await h.db.query(
      `INSERT INTO jobs_dead_letters (id, job_name, payload, attempts, max_attempts, reason, created_at) VALUES (gen_random_uuid(), 'note', '{}', 1, 1, 'exhausted', now())`,
    );
    const schemas = (await call("GET", "/api/openapi.json")).body.components.schemas;
    const keys = (o: object) => Object.keys(o).sort();
    expect(keys((await call("GET", "/api/jobs")).body.items[0])).toEqual(keys(schemas.JobSummary.properties));
    expect(keys((await call("GET", `/api/jobs/${id}`)).body)).toEqual(keys(schemas.Job.properties));
    const dead = (await call("GET", "/api/dead-letters")).body.items[0];
    expect(keys(dead)).toEqual(keys(schemas.DeadLetterSummary.properties));
    expect(keys((await call("GET", `/api/dead-letters/${dead.id}`)).body)).toEqual(keys(schemas.DeadLetter.properties));
    const paths = (await call("GET", "/api/openapi.json")).body.paths;
    expect(paths["/api/jobs"].get.responses["200"].content["application/json"].schema.properties.items.items).toEqual({ $ref: "#/components/schemas/JobSummary" });
    expect(paths["/api/dead-letters"].get.responses["200"].content["application/json"].schema.properties.items.items).toEqual({ $ref: "#/components/schemas/DeadLetterSummary" });
    await h.db.query("DELETE FROM jobs_queue");
    await h.db.query("DELETE FROM jobs_dead_letters");
  });

  it("reads the payloads of the page's rows only, each once (the plan serialises them above the LIMIT)", async () => {
    await h.db.query(
      `INSERT INTO jobs_queue (id, job_name, payload, run_at) SELECT gen_random_uuid(), 'note', jsonb_build_object('text', g::text), now() + interval '1 hour' FROM generate_series(1, 2000) g`,
    );
    await h.db.query(
      `INSERT INTO jobs_dead_letters (id, job_name, payload, attempts, max_attempts, reason, created_at) SELECT gen_random_uuid(), 'note', '{}', 1, 1, 'exhausted', now() FROM generate_series(1, 2000)`,
    );
    await h.db.query("ANALYZE jobs_queue");
    await h.db.query("ANALYZE jobs_dead_letters");
    const seen: Array<{ text: string; params: readonly unknown[] }> = [];
    const capturing: Db = { query: (text, params = []) => (seen.push({ text, params }), h.db.query(text, params)) };
    const cursor = (await listJobs(h.db, jobs.tables, { limit: 2 })).nextCursor!;
    for (const q of [{}, { job: "note", status: "queued" as const, limit: 500 }, { cursor }]) await listJobs(capturing, jobs.tables, q);
    for (const q of [{}, { job: "note", reason: "exhausted", limit: 500 }]) await listDeadLetters(capturing, jobs.tables, q);
    interface PlanNode {
      "Node Type": string;
      Output?: string[];
      Plans?: PlanNode[];
    }
    for (const { text, params } of seen) {
      const [row] = (await h.db.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(`EXPLAIN (VERBOSE, FORMAT JSON) ${text}`, params)).rows;
      // EXPLAIN prints a reference to a child's output as the child's expression, so the
      // node that computes the text is the deepest that mentions it.
      const computing: PlanNode[] = [];
      const mentions = (node: PlanNode): boolean => (node.Output ?? []).some((o) => o.includes("payload)::text"));
      const walk = (node: PlanNode, underLimit: boolean): boolean => {
        const below = (node.Plans ?? []).map((child) => walk(child, underLimit || node["Node Type"] === "Limit")).some(Boolean);
        if (!mentions(node)) return below;
        expect(underLimit).toBe(false);
        if (!below) computing.push(node);
        return true;
      };
      walk(row!["QUERY PLAN"][0]!.Plan, false);
      // One node per page row (the OFFSET 0 subquery), computing the text of a payload whose stored form could hold
      // a small one, and nothing else: the text's size and the outline are read from it above.
      expect(computing.map((n) => [n["Node Type"], n.Output?.length])).toEqual([["Result", 1]]);
      expect(computing[0]!.Output![0]).toMatch(/^CASE WHEN \(\(pg_column_size\([qd]\.payload\) <= 49152\).*THEN \([qd]\.payload\)::text ELSE NULL::text END$/);
    }
    await h.db.query("DELETE FROM jobs_queue");
    await h.db.query("DELETE FROM jobs_dead_letters");
  });
});

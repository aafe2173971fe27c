import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as zm from "zod/mini";
import { defineJob, type EnqueueOptions, isJobsError, JobsError } from "../src/index.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("enqueue");

const email = defineJob({
  name: "send-email",
  schema: z.object({ to: z.email(), subject: z.string().max(200), tags: z.array(z.string()).optional() }),
  handler: () => {},
});
const other = defineJob({ name: "other", schema: z.object({}), handler: () => {} });

const count = async (table: string) => (await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;
const caught = async (p: Promise<unknown>): Promise<JobsError> => {
  try {
    await p;
  } catch (e) {
    if (isJobsError(e)) return e;
    throw e;
  }
  throw new Error("expected a JobsError");
};

describe("enqueue", () => {
  it("stores a validated job due now, delayed, or at a time", async () => {
    const jobs = await h.isolated([email]);
    const now = await jobs.enqueue("send-email", { to: "a@example.com", subject: "hi" }, { correlationId: "c1", priority: 3, maxAttempts: 7 });
    const later = await jobs.enqueue("send-email", { to: "b@example.com", subject: "later" }, { delayMs: 120_000 });
    const at = await jobs.enqueue("send-email", { to: "c@example.com", subject: "at" }, { runAt: "2031-01-02T03:04:05Z" });
    const rows = await h.rows<{ id: string; run_at: Date; priority: number; max_attempts: number; correlation_id: string | null; status: string }>(
      `SELECT id, run_at, priority, max_attempts, correlation_id, status FROM ${jobs.tables.queue}`,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(now.id)).toMatchObject({ status: "queued", priority: 3, max_attempts: 7, correlation_id: "c1" });
    expect(byId.get(now.id)!.run_at.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
    const delay = byId.get(later.id)!.run_at.getTime() - Date.now();
    expect(delay).toBeGreaterThan(100_000);
    expect(delay).toBeLessThan(125_000);
    expect(byId.get(at.id)!.run_at.toISOString()).toBe("2031-01-02T03:04:05.000Z");
  });

  it.each([
    ["an unknown job name", () => ["nope", {}, {}], "unknown_job"],
    ["a payload that fails the schema", () => ["send-email", { to: "not-an-email", subject: "x" }, {}], "invalid_payload"],
    ["a string holding U+0000, which jsonb cannot store", () => ["send-email", { to: "a@example.com", subject: "a\u0000b" }, {}], "invalid_payload"],
    ["a lone UTF-16 surrogate, which is not valid Unicode", () => ["send-email", { to: "a@example.com", subject: "a\ud800b" }, {}], "invalid_payload"],
    ["a key holding U+0000", () => ["send-email", { to: "a@example.com", subject: "x", ["k\u0000"]: 1 }, {}], "invalid_payload"],
    ["a runAt past what PostgreSQL round-trips", () => ["send-email", { to: "a@example.com", subject: "x" }, { runAt: "+275760-09-13T00:00:00Z" }], "invalid_options"],
    ["an idempotency key holding U+0000", () => ["send-email", { to: "a@example.com", subject: "x" }, { idempotencyKey: "a\u0000" }], "invalid_options"],
    ["a run_at that is not a date", () => ["send-email", { to: "a@example.com", subject: "x" }, { runAt: "next tuesday" }], "invalid_options"],
    // new Date() reads each of these as some time (2001-01-01, March 3rd, local time): none is an ISO 8601 instant.
    ["a runAt of a bare number", () => ["send-email", { to: "a@example.com", subject: "x" }, { runAt: "1" }], "invalid_options"],
    ["a runAt on a day that does not exist", () => ["send-email", { to: "a@example.com", subject: "x" }, { runAt: "2031-02-31T10:00:00Z" }], "invalid_options"],
    ["a runAt in another format", () => ["send-email", { to: "a@example.com", subject: "x" }, { runAt: "Fri, 07 Mar 2031 10:00:00" }], "invalid_options"],
    ["a runAt without its offset", () => ["send-email", { to: "a@example.com", subject: "x" }, { runAt: "2031-01-02T03:04:05" }], "invalid_options"],
    ["runAt together with delayMs", () => ["send-email", { to: "a@example.com", subject: "x" }, { runAt: new Date(), delayMs: 5 }], "invalid_options"],
    ["a negative delay", () => ["send-email", { to: "a@example.com", subject: "x" }, { delayMs: -1 }], "invalid_options"],
    ["a payload over the size limit", () => ["send-email", { to: "a@example.com", subject: "x", tags: ["y".repeat(3_000)] }, {}], "payload_too_large"],
    ["a payload that is not JSON", () => ["send-email", { to: "a@example.com", subject: "x", tags: [10n] }, {}], "invalid_payload"],
    // JSON.stringify passes on what a getter throws: null had the enqueue throw a TypeError of its own.
    ["a payload whose getter throws null", () => ["send-email", { to: "a@example.com", get subject(): string { throw null; } }, {}], "invalid_payload"],
    ["a payload whose getter throws undefined", () => ["send-email", { to: "a@example.com", get subject(): string { throw undefined; } }, {}], "invalid_payload"],
  ] as const)("rejects %s with a clear error and stores nothing", async (_label, input, code) => {
    const jobs = await h.isolated([email], { maxPayloadBytes: 2_048 });
    const [name, payload, options] = input() as unknown as readonly [string, unknown, EnqueueOptions];
    const error = await caught(jobs.enqueueUnchecked([{ job: name, payload, ...options }], { batch: false }));
    expect(error.code).toBe(code);
    expect(error.message).not.toMatch(/at .*\.ts:\d+/);
    expect(await count(jobs.tables.queue)).toBe(0);
  });

  it("keeps a runAt's microseconds, as the database does: a job given another's runAt runs after it, in enqueue order", async () => {
    const order: string[] = [];
    const seen = defineJob({ name: "seen", schema: z.object({ n: z.string() }), handler: ({ n }) => void order.push(n) });
    const jobs = await h.isolated([seen]);
    const a = await jobs.enqueue("seen", { n: "a" });
    const runAt = (await jobs.get(a.id))!.runAt;
    await jobs.enqueue("seen", { n: "b" }, { runAt: runAt! });
    await jobs.enqueue("seen", { n: "c" }, { runAt: "2030-01-01T00:00:00.123456+01:00" });
    expect(await h.rows(`SELECT payload->>'n' AS n, to_char(run_at AT TIME ZONE 'UTC', 'US') AS us FROM ${jobs.tables.queue} WHERE payload->>'n' = 'c'`)).toEqual([{ n: "c", us: "123456" }]);
    await jobs.tick({ budgetMs: 2_000 });
    // Stored to the millisecond, b's runAt was before a's, and b ran first.
    expect(order).toEqual(["a", "b"]);
  });

  it("says, for a payload no option of a plain union takes, what each option found wrong, under its path", async () => {
    const shape = defineJob({
      name: "shape",
      schema: z.object({ s: z.union([z.object({ kind: z.literal("circle"), r: z.number() }), z.object({ kind: z.literal("rect"), w: z.number(), h: z.number() })]) }),
      handler: () => {},
    });
    const jobs = await h.isolated([shape]);
    const e = await jobs.enqueue("shape", { s: { kind: "rect", w: 1 } as never }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: "invalid_payload" });
    const issues = (e as JobsError).details as { issues: Array<{ path: unknown[]; message: string; code: string }> };
    // Before: only [{ path: ["s"], message: "Invalid input", code: "invalid_union" }].
    expect(issues.issues).toEqual(expect.arrayContaining([
      expect.objectContaining({ path: ["s"], code: "invalid_union" }),
      expect.objectContaining({ path: ["s", "h"], code: "invalid_type", message: expect.stringMatching(/^option 2: /) }),
      expect.objectContaining({ path: ["s", "kind"], message: expect.stringMatching(/^option 1: /) }),
    ]));
  });

  it("says what is wrong with a key holding U+0000 (it said only '1 to 255 characters')", async () => {
    const jobs = await h.isolated([email]);
    const error = await caught(jobs.enqueue("send-email", { to: "a@example.com", subject: "x" }, { idempotencyKey: "a\u0000b" }));
    expect(error.message).toBe("idempotencyKey must be a string of 1 to 255 characters without U+0000 or a lone surrogate");
    expect((await caught(jobs.enqueue("send-email", { to: "a@example.com", subject: "x" }, { correlationId: "" }))).message).toBe("correlationId must be a string of 1 to 255 characters");
  });

  it("counts a key's 255 characters as PostgreSQL and the filters do (code points), not in UTF-16 units", async () => {
    const jobs = await h.isolated([email]);
    const payload = { to: "a@example.com", subject: "x" };
    // 255 emoji are 510 UTF-16 units: refused before, though runs.list took the same key as a filter.
    const key = "\u{1F600}".repeat(255);
    const first = await jobs.enqueue("send-email", payload, { idempotencyKey: key, correlationId: key });
    expect((await jobs.enqueue("send-email", payload, { idempotencyKey: key })).id).toBe(first.id);
    const debounced = await jobs.enqueue("send-email", payload, { debounce: { key, delayMs: 1_000 } });
    expect(await jobs.enqueue("send-email", payload, { debounce: { key, delayMs: 1_000 } })).toMatchObject({ id: debounced.id, debounced: true });
    for (const field of ["idempotencyKey", "correlationId"] as const) {
      expect(await caught(jobs.enqueue("send-email", payload, { [field]: `${key}a` }))).toMatchObject({ code: "invalid_options", details: { field } });
    }
    expect(await count(jobs.tables.queue)).toBe(2);
  });

  it("refuses a null payload and numbers JSON cannot hold, which a schema may let through, and stores nothing", async () => {
    const anything = defineJob({ name: "anything", schema: z.any(), handler: () => {} });
    const jobs = await h.isolated([anything]);
    for (const payload of [null, Number.NaN, { a: [1, Number.POSITIVE_INFINITY] }]) {
      // The types refuse null too (a cast, to see what the run time does with it).
      const error = await caught(jobs.enqueue("anything", payload as {}));
      expect(error.code).toBe("invalid_payload");
    }
    const nested = await caught(jobs.enqueue("anything", { a: [1, Number.NEGATIVE_INFINITY] }));
    expect((nested.details as { issues: Array<{ path: unknown[] }> }).issues[0]!.path).toEqual(["a", 1]);
    expect(await count(jobs.tables.queue)).toBe(0);
    // null inside a payload is an ordinary JSON value.
    await jobs.enqueue("anything", { a: null });
    await jobs.enqueue("anything", "offset +01:00", { runAt: "2031-01-02T04:04:05+01:00" });
    expect(await h.rows(`SELECT payload, run_at FROM ${jobs.tables.queue} ORDER BY run_at NULLS FIRST`)).toMatchObject([
      { payload: { a: null } },
      { payload: "offset +01:00", run_at: new Date("2031-01-02T03:04:05Z") },
    ]);
  });

  it("answers what JavaScript callers may pass instead of a list or options with a JobsError, not a TypeError", async () => {
    const jobs = await h.isolated([other]);
    for (const items of [{}, [null], ["other"]]) expect((await caught(jobs.enqueueUnchecked(items as never))).code).toBe("invalid_options");
    expect(await jobs.enqueue("other", {}, null as never)).toMatchObject({ deduplicated: false });
    expect((await caught(jobs.deadLetters.discard(5 as never))).code).toBe("not_found");
    expect(await jobs.deadLetters.discardMany(["A", 5] as never)).toMatchObject({ discarded: [] });
  });

  it("refuses a misspelt option, as the HTTP API does, instead of enqueueing a job due now; stores nothing", async () => {
    const jobs = await h.isolated([other]);
    const one = await caught(jobs.enqueue("other", {}, { runat: "2031-01-01T00:00:00Z" } as never));
    expect(one).toMatchObject({ code: "invalid_options", details: { field: "runat" } });
    expect(one.message).toContain("runAt");
    const many = await caught(jobs.enqueueMany([{ job: "other", payload: {} }, { job: "other", payload: {}, delay: 60_000 } as never]));
    expect(many).toMatchObject({ code: "invalid_options", details: { index: 1, field: "delay" } });
    const nested = await caught(jobs.enqueue("other", {}, { debounce: { key: "k", delayMs: 10, delay: 5 } } as never));
    expect(nested).toMatchObject({ code: "invalid_options", details: { field: "debounce.delay" } });
    expect(await count(jobs.tables.queue)).toBe(0);
    // An option left undefined is no option.
    expect(await jobs.enqueue("other", {}, { runAt: undefined, later: undefined } as never)).toMatchObject({ deduplicated: false });
  });

  it("takes no undefined payload, in its types as at run time, even where the schema would", async () => {
    const ping = defineJob({ name: "ping", schema: z.object({ full: z.boolean() }).optional(), handler: () => {} });
    const jobs = await h.isolated([ping]);
    // @ts-expect-error: a payload is JSON, and undefined is none
    expect(await caught(jobs.enqueue("ping", undefined))).toMatchObject({ code: "invalid_payload" });
    expect(await jobs.enqueue("ping", { full: true })).toMatchObject({ deduplicated: false });
  });

  it("refuses an item without a job's name as a malformed item, not as a job nobody defined (it said 'no job named undefined')", async () => {
    const jobs = await h.isolated([email]);
    for (const job of [undefined, 5, null, ["send-email"]]) {
      const e = await caught(jobs.enqueueMany([{ job, payload: { to: "a@b.co", subject: "s" } }] as never));
      expect([job, e.code, e.details]).toEqual([job, "invalid_options", { index: 0, field: "job" }]);
      expect(e.message).toMatch(/^job must be a job's name \(a string\), got /);
    }
  });

  it("reports zod's issues for an invalid payload, pointing at the field", async () => {
    const jobs = await h.isolated([email]);
    const error = await caught(jobs.enqueue("send-email", { to: "x", subject: 5 } as never));
    expect(error.code).toBe("invalid_payload");
    const issues = (error.details as { issues: Array<{ path: unknown[] }> }).issues;
    expect(issues.map((i) => i.path)).toEqual(expect.arrayContaining([["to"], ["subject"]]));
  });

  it("takes zod/mini schemas as well as classic zod ones", async () => {
    const mini = defineJob({
      name: "mini",
      schema: zm.object({ n: zm.int().check(zm.minimum(1)), note: zm._default(zm.string(), "none") }),
      handler: (payload) => void seen.push(payload),
    });
    const seen: unknown[] = [];
    const jobs = await h.isolated([mini]);
    const error = await caught(jobs.enqueue("mini", { n: 0 }));
    expect(error.code).toBe("invalid_payload");
    expect((error.details as { issues: Array<{ path: unknown[] }> }).issues[0]!.path).toEqual(["n"]);
    await jobs.enqueue("mini", { n: 2 });
    expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ succeeded: 1 });
    expect(seen).toEqual([{ n: 2, note: "none" }]);
  });

  it("reports a schema that throws while parsing as invalid_payload, not a crash", async () => {
    const parsesJson = defineJob({ name: "parses-json", schema: z.object({ s: z.string().transform((s) => JSON.parse(s) as unknown) }), handler: () => {} });
    const jobs = await h.isolated([parsesJson]);
    const error = await caught(jobs.enqueue("parses-json", { s: "{not json" }));
    expect(error.code).toBe("invalid_payload");
    expect(await count(jobs.tables.queue)).toBe(0);
  });

  it("enqueues a batch in one statement, and stores none of it when one item is bad (naming its index)", async () => {
    const jobs = await h.isolated([email, other]);
    const ok = await jobs.enqueueMany([
      { job: "send-email", payload: { to: "a@example.com", subject: "1" } },
      { job: "other", payload: {} },
    ]);
    expect(ok).toHaveLength(2);
    expect(await count(jobs.tables.queue)).toBe(2);
    const error = await caught(
      jobs.enqueueUnchecked([
        { job: "other", payload: {} },
        { job: "send-email", payload: { to: "a@example.com", subject: "2" } },
        { job: "send-email", payload: { to: "broken", subject: "3" } },
      ]),
    );
    expect(error.code).toBe("invalid_payload");
    expect(error.details).toMatchObject({ index: 2 });
    expect(await count(jobs.tables.queue)).toBe(2);
  });

  it("refuses a batch of more than 64 MiB of jobs together with payload_too_large, storing none (each payload within its limit)", async () => {
    const bulky = defineJob({ name: "bulky", schema: z.object({ big: z.string() }), handler: () => {} });
    const jobs = await h.isolated([bulky]);
    // Three UTF-8 bytes a character: each payload about 1 MB, 70 of them 73 MB (in 24 million UTF-16 units).
    const big = "\u4e2d".repeat(349_000);
    const error = await caught(jobs.enqueueUnchecked(Array.from({ length: 70 }, () => ({ job: "bulky", payload: { big } }))));
    expect({ code: error.code, message: error.message }).toEqual({
      code: "payload_too_large",
      message: expect.stringMatching(/^enqueueMany's 70 jobs are more than \d+ bytes together; one call sends at most 67108864: split the batch$/),
    });
    expect(await count(jobs.tables.queue)).toBe(0);
    expect(await jobs.enqueueMany(Array.from({ length: 20 }, () => ({ job: "bulky" as const, payload: { big } })))).toHaveLength(20);
  });

  it("dedupes 50 concurrent enqueues with one idempotency key into one row", async () => {
    const jobs = await h.isolated([email]);
    const pool = h.pool(25);
    const enqueuer = h.make([email], { tablePrefix: jobs.settings.tablePrefix }, pool);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => enqueuer.enqueue("send-email", { to: "a@example.com", subject: `try ${i}` }, { idempotencyKey: "order-42" })),
    );
    expect(await count(jobs.tables.queue)).toBe(1);
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(results.filter((r) => !r.deduplicated)).toHaveLength(1);
  });

  it("dedupes only while the keyed job is queued or running; repeats in one batch share the row", async () => {
    const jobs = await h.isolated([email]);
    const [a, b] = await jobs.enqueueMany([
      { job: "send-email", payload: { to: "a@example.com", subject: "x" }, idempotencyKey: "k" },
      { job: "send-email", payload: { to: "a@example.com", subject: "x" }, idempotencyKey: "k" },
    ]);
    expect(b).toEqual({ id: a!.id, deduplicated: true });
    expect(a!.deduplicated).toBe(false);
    await jobs.tick({ budgetMs: 5_000 });
    const again = await jobs.enqueue("send-email", { to: "a@example.com", subject: "x" }, { idempotencyKey: "k" });
    expect(again.deduplicated).toBe(false);
    expect(again.id).not.toBe(a!.id);
  });

  it("a deduplicated enqueue inside an open transaction never locks the live job (the tick can still settle it)", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = false;
    const held = defineJob({ name: "held", schema: z.object({}), handler: async () => { started = true; await gate; } });
    const jobs = await h.isolated([held]);
    const { id } = await jobs.enqueue("held", {}, { idempotencyKey: "only-one" });
    const tick = jobs.tick({ budgetMs: 20_000 });
    await expect.poll(() => started).toBe(true);
    const client = await h.main.connect();
    try {
      await client.query("BEGIN");
      const again = await jobs.enqueue("held", {}, { idempotencyKey: "only-one", db: client });
      expect(again).toEqual({ id, deduplicated: true });
      release();
      // The caller's transaction is still open: the tick's settle must not wait for it.
      const first = await Promise.race([tick.then(() => "tick finished"), sleep(10_000).then(() => "tick blocked")]);
      expect(first).toBe("tick finished");
      expect(await tick).toMatchObject({ succeeded: 1 });
      await client.query("COMMIT");
    } finally {
      client.release();
    }
  });

  it("joins the caller's transaction: a rollback leaves no job, a commit keeps it", async () => {
    const jobs = await h.isolated([email]);
    const client = await h.main.connect();
    try {
      await client.query("BEGIN");
      await jobs.enqueue("send-email", { to: "a@example.com", subject: "rolled back" }, { db: client });
      await client.query("ROLLBACK");
      expect(await count(jobs.tables.queue)).toBe(0);
      await client.query("BEGIN");
      const kept = await jobs.enqueue("send-email", { to: "a@example.com", subject: "committed" }, { db: client });
      // Not visible outside the transaction until it commits.
      expect(await count(jobs.tables.queue)).toBe(0);
      await client.query("COMMIT");
      expect((await h.rows(`SELECT id FROM ${jobs.tables.queue}`)).map((r) => r.id)).toEqual([kept.id]);
    } finally {
      client.release();
    }
  });

  it("round-trips SQL metacharacters, quotes and non-Latin text exactly", async () => {
    const free = defineJob({ name: "free'text\"; DROP TABLE x;--", schema: z.object({ s: z.string() }), handler: () => {} });
    const jobs = await h.isolated([free]);
    const s = `'; DROP TABLE jobs_queue; -- "quoted" \\ back $1 ${"${x}"} 日本語 Ελληνικά 🚀 \u202e`;
    const { id } = await jobs.enqueue(free.name, { s }, { idempotencyKey: "ключ'\"", correlationId: "相关'" });
    const [row] = await h.rows(`SELECT job_name, payload, idempotency_key, correlation_id FROM ${jobs.tables.queue} WHERE id = $1`, [id]);
    expect(row).toEqual({ job_name: free.name, payload: { s }, idempotency_key: "ключ'\"", correlation_id: "相关'" });
  });
});

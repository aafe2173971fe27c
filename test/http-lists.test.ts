// The HTTP API: listing, reading, running and cancelling jobs; paging, reading, replaying and discarding dead letters.
import { describe, expect, it } from "vitest";
import { createApp } from "../src/http/index.js";
import { decodeCursor } from "../src/store/shared/paging.js";
import { API_TOKENS, caller, chunkedBody } from "./http-support.js";
import { echo, expectError, fails, httpFixture, sendEmail } from "./support/http-fixture.js";

const { h, jobs, kicks, call, count, reset, makeDead } = await httpFixture("http_lists");

describe("jobs", () => {
  it("lists with filters and keyset pagination, newest first", async () => {
    await reset();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      ids.push((await call("POST", "/api/jobs", { json: { job: i % 2 ? "ns:echo/v1.x_y" : "send-email", payload: i % 2 ? { text: `${i}` } : { to: "a@b.co" }, delayMs: 60_000 } })).body.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: { status: number; body: any } = await call("GET", `/api/jobs?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(r.status).toBe(200);
      expect(r.body.items.length).toBeLessThanOrEqual(3);
      seen.push(...r.body.items.map((j: { id: string }) => j.id));
      cursor = r.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    const echoes = await call("GET", "/api/jobs?job=ns%3Aecho%2Fv1.x_y&status=queued");
    expect(echoes.body.items.map((j: { id: string }) => j.id)).toEqual([ids[5], ids[3], ids[1]]);
    expect((await call("GET", "/api/jobs?status=running")).body).toEqual({ items: [], nextCursor: null });
    // A well-formed cursor whose date does not exist (February 30th) is refused too, not passed to PostgreSQL.
    const cursorAt = (at: string) => btoa(JSON.stringify([at, crypto.randomUUID()])).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const impossible = cursorAt("2024-02-30T00:00:00.000000Z");
    // Year 0 parses in JavaScript; PostgreSQL has none, and its refusal named no field.
    const yearZero = cursorAt("0000-01-01T00:00:00.000000Z");
    for (const q of ["status=dead", "limit=0", "limit=501", "limit=abc", "cursor=nope", "cursor=W10", `cursor=${impossible}`, `cursor=${yearZero}`, "job=%00", "jobs=x", "limit=1&limit=2"]) {
      expectError(await call("GET", `/api/jobs?${q}`), 422, "invalid_options");
      if (q.startsWith("cursor=")) expect((await call("GET", `/api/dead-letters?${q}`)).body.error).toMatchObject({ code: "invalid_options", details: { field: "cursor" } });
    }
    // Refused by the store itself, so the dashboard (which has no SQLSTATE mapping) refuses it the same way.
    expect(() => decodeCursor(impossible)).toThrow("cursor");
  });

  it("gets a job by id, 404 for unknown or malformed ids", async () => {
    expectError(await call("GET", `/api/jobs/${crypto.randomUUID()}`), 404, "not_found");
    expectError(await call("GET", "/api/jobs/not-a-uuid"), 404, "not_found");
    expectError(await call("GET", "/api/jobs/%27%3B%20--"), 404, "not_found");
  });

  it("cancels a queued job, refuses a running one with 409", async () => {
    await reset();
    const queued = (await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, delayMs: 60_000 } })).body.id;
    const del = await call("DELETE", `/api/jobs/${queued}`);
    expect(del).toMatchObject({ status: 200, body: { id: queued, cancelled: true } });
    expectError(await call("DELETE", `/api/jobs/${queued}`), 404, "not_found");
    const running = crypto.randomUUID();
    await h.rows(
      `INSERT INTO jobs_queue (id, job_name, payload, status, attempt, lease_owner, lease_expires_at) VALUES ($1, 'send-email', '{}', 'running', 1, gen_random_uuid(), now() + interval '1 minute')`,
      [running],
    );
    expectError(await call("DELETE", `/api/jobs/${running}`), 409, "conflict");
    expect((await call("GET", `/api/jobs/${running}`)).body.status).toBe("running");
    expectError(await call("DELETE", "/api/jobs/xyz"), 404, "not_found");
  });

  it("runs a delayed job now (and kicks a tick), leaves a due one in its place, refuses a running one with 409", async () => {
    await reset();
    const later = (await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, delayMs: 3_600_000 } })).body.id;
    const due = (await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "c@d.co" } } })).body.id;
    const dueAt = (await call("GET", `/api/jobs/${due}`)).body.runAt;
    kicks.length = 0;
    const moved = await call("POST", `/api/jobs/${later}/run`);
    expect(moved).toMatchObject({ status: 200, body: { id: later, moved: true } });
    expect(Date.parse(moved.body.runAt)).toBeLessThanOrEqual(Date.now() + 1_000);
    expect(kicks).toEqual([{ ids: [later], dueNow: true }]);
    const [row] = await h.rows<{ due: boolean }>(`SELECT run_at <= now() AS due FROM jobs_queue WHERE id = $1`, [later]);
    expect(row!.due).toBe(true);
    const same = await call("POST", `/api/jobs/${due}/run`);
    expect(same).toMatchObject({ status: 200, body: { id: due, moved: false, runAt: dueAt } });
    expect(kicks).toHaveLength(1);
    const running = crypto.randomUUID();
    await h.rows(
      `INSERT INTO jobs_queue (id, job_name, payload, status, attempt, lease_owner, lease_expires_at) VALUES ($1, 'send-email', '{}', 'running', 1, gen_random_uuid(), now() + interval '1 minute')`,
      [running],
    );
    expectError(await call("POST", `/api/jobs/${running}/run`), 409, "conflict");
    expectError(await call("POST", `/api/jobs/${crypto.randomUUID()}/run`), 404, "not_found");
    expectError(await call("POST", "/api/jobs/nope/run"), 404, "not_found");
  });
});

describe("dead letters", () => {
  it("pages through dead letters newest first by cursor, with no repeat or gap, while new ones arrive", async () => {
    await reset();
    const ids = await makeDead([1, 2, 3, 4, 5, 6, 7]);
    // Distinct death times, newest last in `ids`: the order a page must follow.
    await h.rows(`UPDATE jobs_dead_letters d SET dead_at = now() - (x.i || ' minutes')::interval
                  FROM unnest($1::uuid[]) WITH ORDINALITY AS x(id, i) WHERE d.id = x.id`, [[...ids].reverse()]);
    const seen: string[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    do {
      const page: { status: number; body: any } = await call("GET", `/api/dead-letters?job=fails&limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      sizes.push(page.body.items.length);
      seen.push(...page.body.items.map((d: { id: string }) => d.id));
      cursor = page.body.nextCursor;
      // A dead letter that arrives while paging is newer than every cursor: it never shows up in later pages.
      if (sizes.length === 1) await makeDead([99]);
    } while (cursor);
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual([...ids].reverse());
    expectError(await call("GET", "/api/dead-letters?cursor=not-a-cursor"), 422, "invalid_options");
    expectError(await call("GET", "/api/dead-letters?limit=501"), 422, "invalid_options");
  });

  it("lists, gets and shows a dead job through /api/jobs/:id", async () => {
    await reset();
    const ids = await makeDead([1, 2, 3]);
    const page1 = await call("GET", "/api/dead-letters?limit=2&job=fails");
    expect(page1.body.items).toHaveLength(2);
    const page2 = await call("GET", `/api/dead-letters?limit=2&cursor=${page1.body.nextCursor}`);
    expect(page2.body).toMatchObject({ nextCursor: null });
    expect(new Set([...page1.body.items, ...page2.body.items].map((d: { id: string }) => d.id))).toEqual(new Set(ids));
    const one = await call("GET", `/api/dead-letters/${ids[0]}`);
    expect(one.body).toMatchObject({ id: ids[0], job: "fails", payload: { n: 1 }, reason: "permanent", attempts: 1, lastError: "PermanentJobError: broken on purpose" });
    expect((await call("GET", `/api/jobs/${ids[0]}`)).body).toMatchObject({ status: "dead", reason: "permanent" });
    expect((await call("GET", "/api/dead-letters?reason=exhausted")).body.items).toEqual([]);
    // A reason that is none of them matches nothing ever: refused, naming the ones there are.
    const typo = await call("GET", "/api/dead-letters?reason=exausted");
    expect(typo.status).toBe(422);
    expect(typo.body.error).toMatchObject({ code: "invalid_options", details: { field: "reason" } });
    expect((await call("POST", "/api/dead-letters/replay", { json: { reason: "exausted" } })).status).toBe(422);
    expectError(await call("GET", `/api/dead-letters/${crypto.randomUUID()}`), 404, "not_found");
  });

  it("replays one, as is or with an edited payload validated by the job's schema", async () => {
    await reset();
    const [a, b] = await makeDead([1, 2]);
    // No body, as Node's server hands it over for `curl -X POST`: an empty stream and no Content-Type.
    const r = await call("POST", `/api/dead-letters/${a}/replay`, { raw: chunkedBody(0, 1) });
    expect(r).toMatchObject({ status: 200, body: { id: a, replayed: true } });
    expect((await call("GET", `/api/jobs/${a}`)).body).toMatchObject({ status: "queued", attempt: 0, payload: { n: 1 } });
    expectError(await call("POST", `/api/dead-letters/${a}/replay`), 404, "not_found");
    expectError(await call("POST", `/api/dead-letters/${b}/replay`, { json: { payload: { n: "two" } } }), 422, "invalid_payload");
    expectError(await call("POST", `/api/dead-letters/${b}/replay`, { json: { payload: { n: 2 }, extra: 1 } }), 422, "invalid_options");
    expectError(await call("POST", `/api/dead-letters/${b}/replay`, { raw: "{", headers: { "content-type": "application/json" } }), 400, "malformed_json");
    expect((await call("GET", `/api/dead-letters/${b}`)).body.payload).toEqual({ n: 2 });
    const edited = await call("POST", `/api/dead-letters/${b}/replay`, { json: { payload: { n: 20 } } });
    expect(edited.status).toBe(200);
    expect((await call("GET", `/api/jobs/${b}`)).body.payload).toEqual({ n: 20 });
    expect(kicks.slice(-2)).toEqual([{ ids: [a], dueNow: true }, { ids: [b], dueNow: true }]);
  });

  it("replays the letter as the caller saw it with replays: a retried request is 404, even where the job failed again at once", async () => {
    await reset();
    const [id] = await makeDead([3]);
    expect((await call("POST", `/api/dead-letters/${id}/replay`, { json: { replays: 0 } })).status).toBe(200);
    await jobs.tick({ budgetMs: 5_000 });
    expect((await call("GET", `/api/dead-letters/${id}`)).body.replays).toBe(1);
    expectError(await call("POST", `/api/dead-letters/${id}/replay`, { json: { replays: 0 } }), 404, "not_found");
    const badReplays = await call("POST", `/api/dead-letters/${id}/replay`, { json: { replays: -1 } });
    expectError(badReplays, 422, "invalid_options");
    // The field the library names for the same mistake.
    expect(badReplays.body.error.details.field).toBe("replays");
    await expect(jobs.deadLetters.replay(id!, { replays: -1 })).rejects.toMatchObject({ code: "invalid_options", details: { field: "replays" } });
    expect((await call("POST", `/api/dead-letters/${id}/replay`, { json: { payload: { n: 4 }, replays: 1 } })).status).toBe(200);
    expect((await call("GET", `/api/jobs/${id}`)).body.payload).toEqual({ n: 4 });
  });

  it("queues a dead letter once when 30 replay requests race", async () => {
    await reset();
    const [id] = await makeDead([7]);
    const pool = h.pool(30);
    const c = caller(createApp({ jobs: h.make([sendEmail, echo, fails], {}, pool), env: { JOBS_API_TOKEN: API_TOKENS } }));
    const results = await Promise.all(Array.from({ length: 30 }, () => c("POST", `/api/dead-letters/${id}/replay`)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 404)).toHaveLength(29);
    expect(await count()).toBe(1);
    expect(await count("jobs_dead_letters")).toBe(0);
  });

  it("refuses a replay with 409 while a live job holds its idempotency key", async () => {
    await reset();
    const dead = await call("POST", "/api/jobs", { json: { job: "fails", payload: { n: 1 }, idempotencyKey: "held" } });
    await jobs.tick({ budgetMs: 5_000 });
    await call("POST", "/api/jobs", { json: { job: "fails", payload: { n: 2 }, idempotencyKey: "held", delayMs: 60_000 } });
    expectError(await call("POST", `/api/dead-letters/${dead.body.id}/replay`), 409, "conflict");
    expect(await count("jobs_dead_letters")).toBe(1);
  });

  it("bulk-replays by ids, by job, by reason alone, and every job's ({}), as the library does", async () => {
    await reset();
    const ids = await makeDead([1, 2, 3, 4]);
    const byIds = await call("POST", "/api/dead-letters/replay", { json: { ids: [ids[0], ids[1], "nope"] } });
    expect(byIds.status).toBe(200);
    expect(new Set(byIds.body.replayed)).toEqual(new Set([ids[0], ids[1]]));
    expect(byIds.body.skipped).toEqual([{ id: "nope", reason: "not_found" }]);
    const byJob = await call("POST", "/api/dead-letters/replay", { json: { job: "fails", limit: 1 } });
    expect(byJob.body).toMatchObject({ remaining: 1 });
    expect(byJob.body.replayed).toHaveLength(1);
    for (const bad of [{ ids: [] }, { ids: ids, job: "fails" }, { job: "" }, { job: "fails", limit: 0 }, { reason: "" }, { jobs: "fails" }]) {
      expectError(await call("POST", "/api/dead-letters/replay", { json: bad }), 422, "invalid_options");
    }
    expect(await count("jobs_dead_letters")).toBe(1);
    // By reason alone (it answered 422, while the library and the OpenAPI document took it), then every job's.
    await makeDead([5]);
    const letters = (await call("GET", "/api/dead-letters")).body.items as Array<{ reason: string }>;
    expect(letters.length).toBeGreaterThanOrEqual(2);
    const byReason = await call("POST", "/api/dead-letters/replay", { json: { reason: letters[0]!.reason, limit: 1 } });
    expect(byReason.status).toBe(200);
    expect(byReason.body.replayed).toHaveLength(1);
    const every = await call("POST", "/api/dead-letters/replay", { json: {} });
    expect(every.body).toMatchObject({ remaining: 0 });
    expect(every.body.replayed).toHaveLength(letters.length - 1);
    expect(await count("jobs_dead_letters")).toBe(0);
  });

  it("refuses an empty filter on every list, as a bulk replay does (it answered an empty page)", async () => {
    for (const path of ["/api/dead-letters?job=", "/api/dead-letters?reason=", "/api/jobs?job=", "/api/runs?job=", "/api/runs?correlationId=", "/api/runs?idempotencyKey="]) {
      const res = await call("GET", path);
      expectError(res, 422, "invalid_options");
      expect(res.body.error.details.field).toBe(path.split("?")[1]!.slice(0, -1));
    }
    // A route that takes no parameters refuses one, as the lists refuse a name they do not know (it was ignored).
    const stats = await call("GET", "/api/stats?minutes=false");
    expectError(stats, 422, "invalid_options");
    expect(stats.body.error.details.field).toBe("minutes");
    // And in the library, a replay of nothing given says what to give (a TypeError before).
    await expect(jobs.deadLetters.replayMany(undefined as never)).rejects.toMatchObject({ code: "invalid_options" });
  });

  it("discards a dead letter", async () => {
    await reset();
    const [id] = await makeDead([1]);
    expect(await call("DELETE", `/api/dead-letters/${id}`)).toMatchObject({ status: 200, body: { id, discarded: true } });
    expectError(await call("DELETE", `/api/dead-letters/${id}`), 404, "not_found");
  });
});

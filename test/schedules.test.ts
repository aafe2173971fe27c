// What a tick does with schedules against the real server: the idle tick's cost, exactly-once
// under racing ticks, a dead-lettering occurrence, and sync from code (added/changed/removed).
// Pause, resume and run-now are in schedules-admin.test.ts; DST and outages through whole
// ticks in schedules-clock.test.ts.
import { describe, expect, it } from "vitest";
import { countingDb, type Db, type ScheduleDefinition } from "../src/index.js";
import { materializeOccurrences } from "../src/store/schedules/materialize.js";
import { hourly, MIN, schedulesFixture, tickThrough } from "./support/schedules-fixture.js";

const { h, world } = await schedulesFixture("schedules");

describe("tick cost", () => {
  it("an idle tick with unchanged schedules is exactly one statement", async () => {
    const w = await world("2024-05-01T10:00:30Z");
    const counted = countingDb(h.db);
    const jobs = w.make([hourly("a"), hourly("b", { cron: "*/5 * * * *" })], counted);
    const first = await jobs.tick({ budgetMs: 5_000 });
    // probe, read rows, write rows: the one-time sync; then what is due under the synced rows.
    expect(first.statements).toBe(4);
    w.advance(MIN);
    counted.statements = 0;
    const idle = await jobs.tick({ budgetMs: 5_000 });
    expect(idle.statements).toBe(1);
    expect(counted.statements).toBe(1);
    expect(idle.claimed).toBe(0);
  });

  it("due occurrences of any number of schedules cost one more statement", async () => {
    const touching = async (count: number) => {
      const w = await world("2024-05-01T10:59:30Z");
      const texts: string[] = [];
      const recording: Db = { query: (text, params) => (texts.push(text), h.db.query(text, params)) };
      const jobs = w.make(Array.from({ length: count }, (_, i) => hourly(`s${i}`)), recording);
      await jobs.tick({ budgetMs: 5_000 });
      w.set("2024-05-01T11:00:10Z");
      texts.length = 0;
      const r = await jobs.tick({ budgetMs: 5_000, concurrency: 50 });
      expect(r.succeeded).toBe(count);
      expect(w.runs).toHaveLength(count);
      return texts.filter((t) => t.includes(w.t.schedules)).length;
    };
    // The probe in the first statement, and one materialize statement.
    expect(await touching(1)).toBe(2);
    expect(await touching(25)).toBe(2);
  });
});

describe("exactly once", () => {
  it("five ticks racing on separate connections produce exactly one job per occurrence", async () => {
    const w = await world("2024-05-01T09:58:30Z");
    const schedules = [
      { name: "minutely", cron: "* * * * *", job: "report", payload: { kind: "m" } },
      { name: "catchup", cron: "*/2 * * * *", job: "report", payload: { kind: "c" }, missed: { catchUp: 5 } },
      hourly("hourly", { missed: "latest" }),
    ] satisfies ScheduleDefinition[];
    const pools = Array.from({ length: 5 }, () => h.pool(3));
    const instances = pools.map((p) => w.make(schedules, p));
    await instances[0]!.tick({ budgetMs: 5_000 }); // sync
    const expected: string[] = [];
    for (let minute = 0; minute < 6; minute++) {
      w.advance(MIN);
      const reports = await Promise.all(instances.map((j) => j.tick({ budgetMs: 10_000 })));
      expect(reports.every((r) => r.leaseLost === 0)).toBe(true);
    }
    // 09:59 .. 10:04 minutely; 10:00, 10:02, 10:04 every two minutes; 10:00 hourly.
    for (let m = 59; m <= 64; m++) {
      const iso = new Date(Date.parse("2024-05-01T09:00:00Z") + m * MIN).toISOString();
      expected.push(`schedule:minutely:${iso}`);
      if (m % 2 === 0) expected.push(`schedule:catchup:${iso}`);
    }
    expected.push("schedule:hourly:2024-05-01T10:00:00.000Z");
    expect([...w.runs].sort()).toEqual([...expected].sort());
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${w.t.queue}`)).toEqual([{ n: 0 }]);
  });

  it("a tick that finds every slot taken still runs the occurrence it enqueued once a slot frees", async () => {
    const w = await world("2024-05-01T09:59:30Z");
    const jobs = w.make([hourly("h")], h.main, { maxTicks: 1 });
    await jobs.tick({ budgetMs: 5_000 });
    // Another tick holds the only slot: it claimed before the occurrence existed and is about to finish.
    await h.db.query(`UPDATE ${w.t.ticks} SET owner = gen_random_uuid(), expires_at = now() + interval '30 seconds', started_at = now() WHERE slot = 1`);
    const released = new Promise((resolve) => setTimeout(resolve, 50)).then(() =>
      h.db.query(`UPDATE ${w.t.ticks} SET owner = NULL, expires_at = NULL WHERE slot = 1`));
    w.set("2024-05-01T10:00:05Z");
    const report = await jobs.tick({ budgetMs: 5_000 });
    await released;
    expect(report).toMatchObject({ capped: false, claimed: 1, succeeded: 1 });
    expect(w.runs).toEqual(["schedule:h:2024-05-01T10:00:00.000Z"]);
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${w.t.queue}`)).toEqual([{ n: 0 }]);
  });

  it("a slow tick that saw the old next_run_at after the occurrence finished enqueues nothing", async () => {
    const w = await world("2024-05-01T09:59:30Z");
    const jobs = w.make([hourly("h")]);
    await jobs.tick({ budgetMs: 5_000 });
    const [row] = await h.rows<{ hash: string; next: string }>(
      `SELECT definition_hash AS hash, to_char(next_run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS next FROM ${w.t.schedules}`,
    );
    w.set("2024-05-01T10:00:05Z");
    await jobs.tick({ budgetMs: 5_000 });
    expect(w.runs).toEqual(["schedule:h:2024-05-01T10:00:00.000Z"]);
    // The finished job left the queue, so its idempotency key no longer dedupes: the row must.
    const late = await materializeOccurrences(h.db, w.t, [{
      name: "h", expected: row!.next, definition_hash: row!.hash, next_run_at: "2024-05-01T11:00:00.000Z",
      jobs: [{ id: crypto.randomUUID(), run_at: row!.next, key: `schedule:h:${row!.next}`, priority: 0, max_attempts: 1, flow_key: null, concurrency_key: null, rate_keys: null }],
    }]);
    expect(late).toEqual({ advanced: [], enqueued: [] });
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${w.t.queue}`)).toEqual([{ n: 0 }]);
  });
});

describe("failures", () => {
  it("an occurrence whose job dead-letters is followed by the next occurrence as usual", async () => {
    const w = await world("2024-05-01T09:59:30Z", { fail: true });
    const jobs = w.make([hourly("flaky")]);
    await jobs.tick({ budgetMs: 5_000 });
    w.set("2024-05-01T10:00:20Z");
    expect((await jobs.tick({ budgetMs: 5_000 })).deadLettered).toBe(1);
    w.set("2024-05-01T11:00:20Z");
    expect((await jobs.tick({ budgetMs: 5_000 })).deadLettered).toBe(1);
    const dead = await h.rows(`SELECT idempotency_key, correlation_id, reason FROM ${w.t.deadLetters} ORDER BY idempotency_key`);
    expect(dead).toEqual(["10", "11"].map((hh) => {
      const key = `schedule:flaky:2024-05-01T${hh}:00:00.000Z`;
      return { idempotency_key: key, correlation_id: key, reason: "permanent" };
    }));
    const [info] = (await jobs.schedules.list({ next: 1 })).items;
    expect(info).toMatchObject({ paused: false, nextRuns: ["2024-05-01T12:00:00.000Z"], lastOccurrenceAt: "2024-05-01T11:00:00.000Z" });
  });
});

describe("sync from code", () => {
  it("a schedule removed from code stops, and its row is deleted", async () => {
    const w = await world("2024-05-01T09:30:00Z");
    await w.make([hourly("keep"), hourly("drop")]).tick({ budgetMs: 5_000 });
    expect(await h.rows(`SELECT name FROM ${w.t.schedules} ORDER BY name`)).toEqual([{ name: "drop" }, { name: "keep" }]);
    const jobs = w.make([hourly("keep")]);
    await jobs.tick({ budgetMs: 5_000 });
    expect(await h.rows(`SELECT name FROM ${w.t.schedules}`)).toEqual([{ name: "keep" }]);
    await tickThrough(jobs, w, "2024-05-01T10:00:10Z", "2024-05-01T11:00:10Z", 30 * MIN);
    expect(w.runs).toEqual(["schedule:keep:2024-05-01T10:00:00.000Z", "schedule:keep:2024-05-01T11:00:00.000Z"]);
  });

  it("a changed schedule takes its new cron at the next tick", async () => {
    const w = await world("2024-05-01T09:30:00Z");
    await w.make([hourly("c")]).tick({ budgetMs: 5_000 });
    const changed = w.make([hourly("c", { cron: "*/20 * * * *" })]);
    expect((await changed.schedules.list({ next: 2 })).items[0]!.nextRuns).toEqual(["2024-05-01T09:40:00.000Z", "2024-05-01T10:00:00.000Z"]);
    await tickThrough(changed, w, "2024-05-01T09:31:00Z", "2024-05-01T10:21:00Z", 10 * MIN);
    expect(w.runs).toEqual(["09:40", "10:00", "10:20"].map((m) => `schedule:c:2024-05-01T${m}:00.000Z`));
    const [row] = await h.rows(`SELECT cron, payload FROM ${w.t.schedules}`);
    expect(row).toEqual({ cron: "*/20 * * * *", payload: { kind: "c" } });
  });

  it("two deployments with different definitions side by side: a sync that read after the other's tick never runs its occurrence again", async () => {
    const w = await world("2024-05-01T09:58:30Z");
    const every = (payload: string): ScheduleDefinition => ({ name: "m", cron: "* * * * *", job: "report", payload: { kind: payload } });
    const a = w.make([every("A")]);
    await a.tick({ budgetMs: 5_000 });
    // B's sync is held between its probe (at 09:59:59.5) and its read of the rows, while A handles 10:00.
    let letGo!: () => void;
    const held = new Promise<void>((r) => (letGo = r));
    let reading!: () => void;
    const reached = new Promise<void>((r) => (reading = r));
    const holding: Db = {
      query: async (text, params, options) => {
        if (/definition_hash, (s\.)?paused/.test(text)) (reading(), await held);
        return h.db.query(text, params, options);
      },
    };
    const b = w.make([every("B")], holding);
    w.set("2024-05-01T09:59:59.500Z");
    const bTick = b.tick({ budgetMs: 10_000 });
    await reached;
    w.set("2024-05-01T10:00:00.200Z");
    await a.tick({ budgetMs: 5_000 });
    expect(w.runs).toEqual(["schedule:m:2024-05-01T10:00:00.000Z"]);
    letGo();
    await bTick;
    w.set("2024-05-01T10:00:30Z");
    await b.tick({ budgetMs: 5_000 });
    w.set("2024-05-01T10:01:00.100Z");
    await b.tick({ budgetMs: 5_000 });
    expect(w.runs).toEqual(["schedule:m:2024-05-01T10:00:00.000Z", "schedule:m:2024-05-01T10:01:00.000Z"]);
  });

  it("a changed payload reaches the next occurrence", async () => {
    const w = await world("2024-05-01T09:30:00Z");
    await w.make([hourly("p")]).tick({ budgetMs: 5_000 });
    const changed = w.make([hourly("p", { payload: { kind: "v2" } })]);
    await changed.tick({ budgetMs: 5_000 });
    expect(await h.rows(`SELECT payload FROM ${w.t.schedules}`)).toEqual([{ payload: { kind: "v2" } }]);
  });

  it("a tick that syncs a changed schedule enqueues its due occurrence (it passed over the row it had probed, and a next tick more than the grace later lost it)", async () => {
    const w = await world("2024-05-01T09:30:00Z");
    await w.make([hourly("c")]).tick({ budgetMs: 5_000 });
    const changed = w.make([hourly("c", { payload: { kind: "v2" } })]);
    w.set("2024-05-01T10:00:30Z");
    await changed.tick({ budgetMs: 5_000 });
    w.set("2024-05-01T10:06:00Z");
    await changed.tick({ budgetMs: 5_000 });
    w.set("2024-05-01T11:00:30Z");
    await changed.tick({ budgetMs: 5_000 });
    expect(w.runs).toEqual(["schedule:c:2024-05-01T10:00:00.000Z", "schedule:c:2024-05-01T11:00:00.000Z"]);
  });

  it("two deployments ticking in turn, each syncing its definition, run a changed schedule every minute, as the unchanged one beside it", async () => {
    const w = await world("2024-05-01T09:58:30Z");
    const every = (kind: string) => ({ name: "m", cron: "* * * * *", job: "report", payload: { kind } });
    const old = w.make([every("old"), hourly("untouched", { cron: "* * * * *" })]);
    await old.tick({ budgetMs: 5_000 });
    const next = w.make([every("new"), hourly("untouched", { cron: "* * * * *" })]);
    for (let i = 0; i < 10; i++) {
      w.set(new Date(Date.parse("2024-05-01T10:00:20Z") + i * MIN).toISOString());
      await (i % 2 === 0 ? next : old).tick({ budgetMs: 5_000 });
    }
    expect(w.runs.filter((r) => r.startsWith("schedule:untouched:"))).toHaveLength(10);
    // Before: none (each tick re-synced, then passed over the row it had probed under the other's hash).
    expect(w.runs.filter((r) => r.startsWith("schedule:m:"))).toHaveLength(10);
  });
});

// A fixed-time schedule whose time in the skipped hour, shifted by the jump, lands on another of its
// times: `0 2,3 * * *` in New York on 2024-03-10 runs 02:00 at 03:00 EDT (07:00Z), and 03:00 EDT
// too. Both run, once each: the real time keyed `schedule:<name>:<ISO>` as every other occurrence,
// the shifted one by its local time at the offset from before the jump (`...T02:00:00.000-05:00`).
// The planner first, then whole ticks on a fake clock against the real server, racing ticks, and a
// tick of the last release (one job per instant) racing the new ones.
import { describe, expect, it } from "vitest";
import { defineSchedule, occurrenceKey, type MissedPolicy, type ScheduleDefinition } from "../src/index.js";
import { planOccurrences } from "../src/schedules/plan.js";
import { materializeOccurrences } from "../src/store/schedules/materialize.js";
import { MIN, schedulesFixture, tickThrough } from "./support/schedules-fixture.js";

const { h, world } = await schedulesFixture("schedule_dst_collision");

const at = (iso: string) => Date.parse(iso);
const isos = (xs: readonly number[]) => xs.map((x) => new Date(x).toISOString());
const NY = "America/New_York";
const sched = (cron: string, timezone: string, missed?: MissedPolicy) => defineSchedule({ name: "s", cron, timezone, job: "report", payload: {}, missed });

/** What a tick each minute (7 s past it) enqueues from `from` to `to`: the planner as runtime drives it. */
const simulate = (cron: string, timezone: string, from: string, to: string) => {
  const s = sched(cron, timezone);
  const instants: number[] = [];
  const keys: string[] = [];
  let next = s.rule.nextAfter(at(from));
  for (let minute = at(from); minute < at(to); minute += MIN) {
    const now = minute + 7_000;
    if (next > now) continue;
    const plan = planOccurrences(s, next, now, 5 * MIN);
    instants.push(...plan.occurrences);
    keys.push(...plan.runs.map((r) => occurrenceKey("s", r.at, r.nominal)));
    next = plan.next;
  }
  return { instants: isos(instants), keys };
};

describe("planner: a skipped time shifted onto another of the schedule's times", () => {
  it("`0 2,3 * * *` New York runs twice every day, both at 07:00Z on the spring-forward night", () => {
    const r = simulate("0 2,3 * * *", NY, "2024-03-09T04:00:00Z", "2024-03-12T04:00:00Z");
    expect(r.instants).toEqual([
      "2024-03-09T07:00:00.000Z", "2024-03-09T08:00:00.000Z",
      "2024-03-10T07:00:00.000Z", "2024-03-10T07:00:00.000Z", // 02:00 (does not exist: 03:00 EDT) and 03:00 EDT
      "2024-03-11T06:00:00.000Z", "2024-03-11T07:00:00.000Z",
    ]);
    expect(r.keys).toEqual([
      "schedule:s:2024-03-09T07:00:00.000Z", "schedule:s:2024-03-09T08:00:00.000Z",
      "schedule:s:2024-03-10T02:00:00.000-05:00", "schedule:s:2024-03-10T07:00:00.000Z",
      "schedule:s:2024-03-11T06:00:00.000Z", "schedule:s:2024-03-11T07:00:00.000Z",
    ]);
    // Every key still names its run's instant.
    expect(r.keys.map((k) => new Date(k.slice("schedule:s:".length)).toISOString())).toEqual(r.instants);
  });

  it("`*/30 2-3 * * *` New York: all four that night", () => {
    expect(simulate("*/30 2-3 * * *", NY, "2024-03-10T00:00:00Z", "2024-03-11T00:00:00Z").keys).toEqual([
      "schedule:s:2024-03-10T02:00:00.000-05:00", "schedule:s:2024-03-10T07:00:00.000Z",
      "schedule:s:2024-03-10T02:30:00.000-05:00", "schedule:s:2024-03-10T07:30:00.000Z",
    ]);
  });

  it("`0 0-22 * * *` New York: 23 runs that night, two at 07:00Z", () => {
    const r = simulate("0 0-22 * * *", NY, "2024-03-10T04:00:00Z", "2024-03-11T04:00:00Z");
    expect(r.instants).toHaveLength(23);
    expect(new Set(r.keys).size).toBe(23);
    expect(r.instants.filter((x) => x === "2024-03-10T07:00:00.000Z")).toHaveLength(2);
  });

  it("Europe/London `30 1,2 * * *` and Australia/Lord_Howe `0,30 2 * * *` (a 30-minute jump)", () => {
    expect(simulate("30 1,2 * * *", "Europe/London", "2024-03-31T00:00:00Z", "2024-04-01T00:00:00Z").keys).toEqual([
      "schedule:s:2024-03-31T01:30:00.000+00:00", "schedule:s:2024-03-31T01:30:00.000Z",
    ]);
    // October 6 2024, 02:00 LHST (+10:30) → 02:30 LHDT (+11): 02:00 runs at 02:30, with the real 02:30.
    expect(simulate("0,30 2 * * *", "Australia/Lord_Howe", "2024-10-05T12:00:00Z", "2024-10-06T12:00:00Z").keys).toEqual([
      "schedule:s:2024-10-06T02:00:00.000+10:30", "schedule:s:2024-10-05T15:30:00.000Z",
    ]);
  });

  it("keys nothing else differently: a skipped time alone, a repeated hour, ordinary days", () => {
    expect(simulate("30 2 * * *", NY, "2024-03-10T00:00:00Z", "2024-03-11T00:00:00Z").keys).toEqual(["schedule:s:2024-03-10T07:30:00.000Z"]);
    expect(simulate("0 1,2 * * *", NY, "2024-11-03T00:00:00Z", "2024-11-04T00:00:00Z").keys).toEqual([
      "schedule:s:2024-11-03T05:00:00.000Z", "schedule:s:2024-11-03T07:00:00.000Z",
    ]);
    expect(simulate("0 * * * *", NY, "2024-03-10T04:30:00Z", "2024-03-10T09:00:00Z").keys).toEqual(
      ["05", "06", "07", "08"].map((hh) => `schedule:s:2024-03-10T${hh}:00:00.000Z`),
    );
  });

  it("the missed policies treat the two runs of one instant as one occurrence: both run or neither", () => {
    const plan = (missed: MissedPolicy | undefined, expected: string, now: string) => {
      const p = planOccurrences(sched("0 2,3 * * *", NY, missed), at(expected), at(now), 5 * MIN);
      return { runs: p.runs.map((r) => occurrenceKey("s", r.at, r.nominal)), skipped: p.skipped, next: isos([p.next])[0] };
    };
    const pair = ["schedule:s:2024-03-10T02:00:00.000-05:00", "schedule:s:2024-03-10T07:00:00.000Z"];
    const next = "2024-03-11T06:00:00.000Z";
    expect(plan("skip", "2024-03-10T07:00:00Z", "2024-03-10T07:04:00Z")).toEqual({ runs: pair, skipped: false, next });
    expect(plan("skip", "2024-03-10T07:00:00Z", "2024-03-10T07:06:00Z")).toEqual({ runs: [], skipped: true, next });
    // An outage from 03-09 02:30 EST to 03-10 03:30 EDT: 03-09 03:00 EST and the pair were missed.
    expect(plan("latest", "2024-03-09T08:00:00Z", "2024-03-10T07:30:00Z")).toEqual({ runs: pair, skipped: true, next });
    expect(plan({ catchUp: 1 }, "2024-03-09T08:00:00Z", "2024-03-10T07:30:00Z")).toEqual({ runs: pair, skipped: true, next });
    expect(plan({ catchUp: 2 }, "2024-03-09T08:00:00Z", "2024-03-10T07:30:00Z")).toEqual({
      runs: ["schedule:s:2024-03-09T08:00:00.000Z", ...pair], skipped: false, next,
    });
  });

  it("random fixed times run each of their readings once per local day across transitions in 8 zones", () => {
    let seed = 7; // mulberry32: the same expressions every run
    const rand = (n: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    const nights: Array<[string, string]> = [
      [NY, "2024-03-09T00:00:00Z"], [NY, "2024-11-02T00:00:00Z"], ["Europe/London", "2024-03-30T00:00:00Z"], ["Australia/Lord_Howe", "2024-10-04T12:00:00Z"],
      ["America/Santiago", "2024-09-07T00:00:00Z"], ["Antarctica/Troll", "2024-03-30T00:00:00Z"], ["America/Havana", "2024-03-09T00:00:00Z"], ["Asia/Tehran", "2022-03-20T00:00:00Z"],
    ];
    const wrong: string[] = [];
    for (const [zone, from] of nights) {
      for (let k = 0; k < 25; k++) {
        const pick = (count: number, n: number, scale: number) => [...new Set(Array.from({ length: count }, () => rand(n) * scale))].sort((a, b) => a - b);
        const cron = `${pick(1 + rand(3), 4, 15).join(",")} ${pick(1 + rand(4), 5, 1).join(",")} * * *`;
        const { keys } = simulate(cron, zone, from, new Date(at(from) + 3 * 86_400_000).toISOString());
        // A shifted run's key names its own local day; any other names its instant, read in the zone.
        const dayOf = (key: string) => {
          const time = key.slice("schedule:s:".length);
          return time.endsWith("Z") ? new Date(time).toLocaleDateString("en-CA", { timeZone: zone }) : time.slice(0, 10);
        };
        const perDay = new Map<string, number>();
        for (const key of keys) perDay.set(dayOf(key), (perDay.get(dayOf(key)) ?? 0) + 1);
        const want = cron.split(" ").slice(0, 2).reduce((n, f) => n * f.split(",").length, 1);
        const days = [...perDay.keys()].sort().slice(1, -1); // whole local days only
        if (new Set(keys).size !== keys.length || days.some((d) => perDay.get(d) !== want)) wrong.push(`${zone} ${cron}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("the next occurrences list the instant twice", () => {
    const r = sched("0 2,3 * * *", NY).rule;
    expect(isos(r.take(3, at("2024-03-09T12:00:00Z")))).toEqual(["2024-03-10T07:00:00.000Z", "2024-03-10T07:00:00.000Z", "2024-03-11T06:00:00.000Z"]);
    expect(isos(r.take(1, at("2024-03-09T12:00:00Z")))).toEqual(["2024-03-10T07:00:00.000Z"]);
  });
});

describe("through whole ticks on the real server", () => {
  const def = (name: string, cron: string, timezone = NY, extra: Partial<ScheduleDefinition> = {}): ScheduleDefinition => ({
    name, cron, timezone, job: "report", payload: { kind: name }, ...extra,
  });
  const runsOf = (runs: readonly string[], name: string) => runs.filter((r) => r.startsWith(`schedule:${name}:`)).sort();

  it("New York spring-forward, a tick every 5 minutes: every time runs once", async () => {
    const w = await world("2024-03-10T04:01:00Z");
    const jobs = w.make([def("pair", "0 2,3 * * *"), def("halves", "*/30 2-3 * * *"), def("most", "0 0-22 * * *"), def("alone", "30 2 * * *")]);
    await tickThrough(jobs, w, "2024-03-10T04:01:00Z", "2024-03-10T10:01:00Z", 5 * MIN);
    expect(runsOf(w.runs, "pair")).toEqual(["schedule:pair:2024-03-10T02:00:00.000-05:00", "schedule:pair:2024-03-10T07:00:00.000Z"]);
    expect(runsOf(w.runs, "halves")).toEqual([
      "schedule:halves:2024-03-10T02:00:00.000-05:00", "schedule:halves:2024-03-10T02:30:00.000-05:00",
      "schedule:halves:2024-03-10T07:00:00.000Z", "schedule:halves:2024-03-10T07:30:00.000Z",
    ]);
    // 00:00 and 01:00 EST, 02:00 shifted and 03:00 to 06:00 EDT.
    expect(runsOf(w.runs, "most")).toEqual([
      "schedule:most:2024-03-10T02:00:00.000-05:00",
      ...["05", "06", "07", "08", "09", "10"].map((hh) => `schedule:most:2024-03-10T${hh}:00:00.000Z`),
    ]);
    expect(runsOf(w.runs, "alone")).toEqual(["schedule:alone:2024-03-10T07:30:00.000Z"]);
    expect(new Set(w.runs).size).toBe(w.runs.length);
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${w.t.queue}`)).toEqual([{ n: 0 }]);
  });

  it("Europe/London `30 1,2 * * *`: both at 01:30Z", async () => {
    const w = await world("2024-03-30T23:01:00Z");
    const jobs = w.make([def("ldn", "30 1,2 * * *", "Europe/London")]);
    await tickThrough(jobs, w, "2024-03-30T23:01:00Z", "2024-03-31T03:01:00Z", 5 * MIN);
    expect(runsOf(w.runs, "ldn")).toEqual(["schedule:ldn:2024-03-31T01:30:00.000+00:00", "schedule:ldn:2024-03-31T01:30:00.000Z"]);
  });

  it("lists the instant twice in nextRuns, and records it as the last occurrence", async () => {
    const w = await world("2024-03-09T12:00:00Z");
    const jobs = w.make([def("pair", "0 2,3 * * *")]);
    await jobs.tick({ budgetMs: 5_000 });
    const [before] = (await jobs.schedules.list({ next: 3 })).items;
    expect(before!.nextRuns).toEqual(["2024-03-10T07:00:00.000Z", "2024-03-10T07:00:00.000Z", "2024-03-11T06:00:00.000Z"]);
    w.set("2024-03-10T07:00:30Z");
    await jobs.tick({ budgetMs: 5_000 });
    const [after] = (await jobs.schedules.list({ next: 2 })).items;
    expect(after).toMatchObject({ nextRuns: ["2024-03-11T06:00:00.000Z", "2024-03-11T07:00:00.000Z"], lastOccurrenceAt: "2024-03-10T07:00:00.000Z" });
  });

  it("five ticks racing on separate connections enqueue the pair exactly once", async () => {
    const w = await world("2024-03-10T06:58:00Z");
    const schedules = [def("pair", "0 2,3 * * *", NY, { missed: { catchUp: 3 } }), def("halves", "*/30 2-3 * * *")];
    const instances = Array.from({ length: 5 }, () => w.make(schedules, h.pool(3)));
    await instances[0]!.tick({ budgetMs: 5_000 });
    for (const now of ["2024-03-10T07:00:01Z", "2024-03-10T07:00:02Z", "2024-03-10T07:30:01Z"]) {
      w.set(now);
      await Promise.all(instances.map((j) => j.tick({ budgetMs: 10_000 })));
    }
    expect([...w.runs].sort()).toEqual([
      "schedule:halves:2024-03-10T02:00:00.000-05:00", "schedule:halves:2024-03-10T02:30:00.000-05:00",
      "schedule:halves:2024-03-10T07:00:00.000Z", "schedule:halves:2024-03-10T07:30:00.000Z",
      "schedule:pair:2024-03-10T02:00:00.000-05:00", "schedule:pair:2024-03-10T07:00:00.000Z",
    ]);
  });

  it("beside the last release's ticks (one job per instant): no occurrence twice; the pair whole unless an old tick handles it", async () => {
    const s = sched("0 2,3 * * *", NY);
    /** The last release's advance: the same next_run_at and key, one job per due instant. */
    const oldTick = async (w: Awaited<ReturnType<typeof world>>, nowMs: number) => {
      const [row] = await h.rows<{ hash: string; next: string }>(
        `SELECT definition_hash AS hash, to_char(next_run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS next FROM ${w.t.schedules}`,
      );
      const latest = s.rule.latestAtOrBefore(nowMs, at(row!.next));
      const jobs = latest === undefined || nowMs - latest > 5 * MIN ? [] : [{
        id: crypto.randomUUID(), run_at: new Date(latest).toISOString(), key: `schedule:pair:${new Date(latest).toISOString()}`,
        priority: 0, max_attempts: 1, flow_key: null, concurrency_key: null, rate_keys: null,
      }];
      await materializeOccurrences(h.db, w.t, [{ name: "pair", expected: row!.next, definition_hash: row!.hash, next_run_at: new Date(s.rule.nextAfter(nowMs)).toISOString(), jobs }]);
    };
    /** Ticks through the three days with an old and new ticks at each occurrence; the pair's shifted run, if any. */
    const across = async (order: "old first" | "new first" | "together") => {
      const w = await world("2024-03-09T06:58:00Z");
      const instances = Array.from({ length: 3 }, () => w.make([def("pair", "0 2,3 * * *")], h.pool(2)));
      await instances[0]!.tick({ budgetMs: 5_000 });
      for (const now of ["2024-03-09T07:00:05Z", "2024-03-09T08:00:05Z", "2024-03-10T07:00:05Z", "2024-03-11T06:00:05Z"]) {
        w.set(now);
        const old = () => oldTick(w, at(now));
        const news = () => Promise.all(instances.map((j) => j.tick({ budgetMs: 10_000 })));
        if (order === "together") await Promise.all([old(), news()]);
        else if (order === "old first") await old().then(news);
        else await news().then(old);
        await instances[0]!.tick({ budgetMs: 10_000 }); // runs what an old tick enqueued
      }
      expect(await h.rows(`SELECT count(*)::int AS n FROM ${w.t.queue}`)).toEqual([{ n: 0 }]);
      const keys = [...w.runs];
      expect(new Set(keys).size).toBe(keys.length);
      // Every ordinary occurrence, and the pair's real run, exactly once whoever won.
      expect(keys.filter((k) => !k.endsWith("-05:00")).sort()).toEqual(
        ["2024-03-09T07:00", "2024-03-09T08:00", "2024-03-10T07:00", "2024-03-11T06:00"].map((x) => `schedule:pair:${x}:00.000Z`),
      );
      return keys.filter((k) => k.endsWith("-05:00"));
    };
    expect(await across("new first")).toEqual(["schedule:pair:2024-03-10T02:00:00.000-05:00"]);
    // The last release's tick won the instant: it keeps dropping the shifted run (as it always did).
    expect(await across("old first")).toEqual([]);
    for (let round = 0; round < 4; round++) expect((await across("together")).length).toBeLessThanOrEqual(1);
  });
});

// Pure arithmetic of schedules: DST rules, odd offsets and missed-occurrence plans. How the two
// day fields combine is in schedules-daymatch.test.ts, validation and descriptions in
// schedules-validation.test.ts; the database side is in schedules.test.ts, schedules-admin.test.ts
// and schedules-clock.test.ts.
import { describe, expect, it } from "vitest";
import { defineSchedule, type MissedPolicy } from "../src/index.js";
import { planOccurrences } from "../src/schedules/plan.js";

const MIN = 60_000;
const at = (iso: string) => Date.parse(iso);
const isos = (xs: number[]) => xs.map((x) => new Date(x).toISOString());
const rule = (cron: string, timezone: string) => defineSchedule({ name: "t", cron, timezone, job: "j", payload: {} }).rule;
/** Every occurrence in [from, to). */
const between = (cron: string, timezone: string, from: string, to: string) => {
  const r = rule(cron, timezone);
  const out: number[] = [];
  for (let t = r.nextAfter(at(from) - 1); t < at(to); t = r.nextAfter(t)) out.push(t);
  return isos(out);
};
const gaps = (xs: string[]) => xs.slice(1).map((x, i) => (Date.parse(x) - Date.parse(xs[i]!)) / MIN);

describe("DST: America/New_York", () => {
  it("fires `0 * * * *` every real hour across spring-forward (02:00 EST → 03:00 EDT)", () => {
    const runs = between("0 * * * *", "America/New_York", "2024-03-10T04:00:00Z", "2024-03-10T10:00:00Z");
    expect(runs).toEqual(["04", "05", "06", "07", "08", "09"].map((h) => `2024-03-10T${h}:00:00.000Z`));
  });

  it("fires `0 * * * *` every real hour across fall-back, both passes of 01:00", () => {
    const runs = between("0 * * * *", "America/New_York", "2024-11-03T03:00:00Z", "2024-11-03T09:00:00Z");
    // 05:00Z is 01:00 EDT, 06:00Z is 01:00 EST.
    expect(runs).toEqual(["03", "04", "05", "06", "07", "08"].map((h) => `2024-11-03T${h}:00:00.000Z`));
  });

  it("runs a fixed time in the skipped hour once, shifted by the jump (02:30 → 03:30 EDT)", () => {
    expect(between("30 2 * * *", "America/New_York", "2024-03-09T00:00:00Z", "2024-03-12T00:00:00Z")).toEqual([
      "2024-03-09T07:30:00.000Z", // 02:30 EST
      "2024-03-10T07:30:00.000Z", // 02:30 does not exist: 03:30 EDT
      "2024-03-11T06:30:00.000Z", // 02:30 EDT
    ]);
  });

  it("runs a fixed time in the repeated hour once, at its first pass", () => {
    expect(between("30 1 * * *", "America/New_York", "2024-11-02T00:00:00Z", "2024-11-05T00:00:00Z")).toEqual([
      "2024-11-02T05:30:00.000Z",
      "2024-11-03T05:30:00.000Z", // 01:30 EDT; 01:30 EST (06:30Z) does not fire
      "2024-11-04T06:30:00.000Z",
    ]);
  });

  it("fires an every-15-minutes schedule at every real quarter hour through the repeated hour", () => {
    const runs = between("*/15 * * * *", "America/New_York", "2024-11-03T04:30:00Z", "2024-11-03T07:30:00Z");
    expect(runs).toHaveLength(12);
    expect(new Set(gaps(runs))).toEqual(new Set([15]));
  });
});

describe("DST: Europe/London", () => {
  it("fires `0 * * * *` every real hour across both transitions", () => {
    const spring = between("0 * * * *", "Europe/London", "2024-03-30T23:00:00Z", "2024-03-31T04:00:00Z");
    expect(new Set(gaps(spring))).toEqual(new Set([60]));
    expect(spring).toHaveLength(5);
    const autumn = between("0 * * * *", "Europe/London", "2024-10-26T23:00:00Z", "2024-10-27T04:00:00Z");
    expect(new Set(gaps(autumn))).toEqual(new Set([60]));
    expect(autumn).toHaveLength(5);
  });

  it("runs 01:30 once on both transition days", () => {
    // Spring: 01:30 GMT does not exist → 02:30 BST (01:30Z). Autumn: first pass, 01:30 BST (00:30Z).
    expect(between("30 1 * * *", "Europe/London", "2024-03-31T00:00:00Z", "2024-04-01T00:00:00Z")).toEqual(["2024-03-31T01:30:00.000Z"]);
    expect(between("30 1 * * *", "Europe/London", "2024-10-27T00:00:00Z", "2024-10-28T00:00:00Z")).toEqual(["2024-10-27T00:30:00.000Z"]);
  });
});

describe("odd offsets", () => {
  it("Australia/Lord_Howe (30-minute DST shift): every real half hour across both transitions", () => {
    // April 7 2024 02:00 LHDT (+11) → 01:30 LHST (+10:30): 01:30-01:59 repeats.
    const autumn = between("*/30 * * * *", "Australia/Lord_Howe", "2024-04-06T13:00:00Z", "2024-04-06T17:00:00Z");
    expect(autumn).toHaveLength(8);
    expect(new Set(gaps(autumn))).toEqual(new Set([30]));
    // October 6 2024 02:00 LHST → 02:30 LHDT: 02:00-02:29 is skipped.
    const spring = between("*/30 * * * *", "Australia/Lord_Howe", "2024-10-05T13:00:00Z", "2024-10-05T17:00:00Z");
    expect(spring).toHaveLength(8);
    expect(new Set(gaps(spring))).toEqual(new Set([30]));
  });

  it("Australia/Lord_Howe: fixed times in the skipped and repeated half hours run once", () => {
    // 02:00 does not exist on Oct 6 → 02:30 LHDT (15:30Z on Oct 5).
    expect(between("0 2 * * *", "Australia/Lord_Howe", "2024-10-05T12:00:00Z", "2024-10-06T12:00:00Z")).toEqual(["2024-10-05T15:30:00.000Z"]);
    // 01:45 happens at 14:45Z (LHDT) and 15:15Z (LHST): only the first fires.
    expect(between("45 1 * * *", "Australia/Lord_Howe", "2024-04-06T12:00:00Z", "2024-04-07T12:00:00Z")).toEqual(["2024-04-06T14:45:00.000Z"]);
  });

  it("Asia/Kathmandu (+05:45)", () => {
    expect(between("0 9 * * *", "Asia/Kathmandu", "2024-01-01T00:00:00Z", "2024-01-03T00:00:00Z")).toEqual([
      "2024-01-01T03:15:00.000Z",
      "2024-01-02T03:15:00.000Z",
    ]);
    expect(between("0 * * * *", "Asia/Kathmandu", "2024-01-01T00:00:00Z", "2024-01-01T03:00:00Z")).toEqual([
      "2024-01-01T00:15:00.000Z",
      "2024-01-01T01:15:00.000Z",
      "2024-01-01T02:15:00.000Z",
    ]);
  });

  it("six fields: seconds", () => {
    expect(between("*/20 * * * * *", "UTC", "2024-01-01T00:00:00Z", "2024-01-01T00:01:00Z")).toEqual([
      "2024-01-01T00:00:00.000Z",
      "2024-01-01T00:00:20.000Z",
      "2024-01-01T00:00:40.000Z",
    ]);
  });

  it("finds the latest occurrence at or before a time, across the repeated hour", () => {
    const r = rule("0 * * * *", "America/New_York");
    expect(isos([r.latestAtOrBefore(at("2024-11-03T06:30:00Z"), 0)!])).toEqual(["2024-11-03T06:00:00.000Z"]);
    expect(isos([r.latestAtOrBefore(at("2024-11-03T05:59:59Z"), 0)!])).toEqual(["2024-11-03T05:00:00.000Z"]);
    expect(r.latestAtOrBefore(at("2024-11-03T05:59:59Z"), at("2024-11-03T05:30:00Z"))).toBeUndefined();
  });
});

describe("missed occurrences", () => {
  const hourly = (missed?: MissedPolicy) => defineSchedule({ name: "h", cron: "0 * * * *", job: "j", payload: {}, missed });
  const expected = at("2024-05-01T10:00:00Z");
  const plan = (missed: MissedPolicy | undefined, now: string) => {
    const p = planOccurrences(hourly(missed), expected, at(now), 5 * MIN);
    return { runs: isos(p.occurrences), next: isos([p.next])[0], skipped: p.skipped };
  };

  it("skip (default): runs an on-time occurrence, drops late and superseded ones", () => {
    expect(plan(undefined, "2024-05-01T10:00:40Z")).toEqual({ runs: ["2024-05-01T10:00:00.000Z"], next: "2024-05-01T11:00:00.000Z", skipped: false });
    // Outage from 10:00 to 13:20: 10, 11, 12 and 13 o'clock all passed; 13:00 is 20 minutes late.
    expect(plan("skip", "2024-05-01T13:20:00Z")).toEqual({ runs: [], next: "2024-05-01T14:00:00.000Z", skipped: true });
    // Back at 13:02: the 13:00 run is on time, 10-12 are dropped.
    expect(plan("skip", "2024-05-01T13:02:00Z")).toEqual({ runs: ["2024-05-01T13:00:00.000Z"], next: "2024-05-01T14:00:00.000Z", skipped: true });
  });

  it("latest: runs the most recent missed occurrence once", () => {
    expect(plan("latest", "2024-05-01T13:20:00Z").runs).toEqual(["2024-05-01T13:00:00.000Z"]);
  });

  it("catchUp: runs each missed occurrence up to the cap, the most recent ones, oldest first", () => {
    expect(plan({ catchUp: 2 }, "2024-05-01T13:20:00Z").runs).toEqual(["2024-05-01T12:00:00.000Z", "2024-05-01T13:00:00.000Z"]);
    expect(plan({ catchUp: 10 }, "2024-05-01T13:20:00Z")).toEqual({
      runs: ["10", "11", "12", "13"].map((h) => `2024-05-01T${h}:00:00.000Z`),
      next: "2024-05-01T14:00:00.000Z",
      skipped: false,
    });
  });
});

describe("near an offset change, a dense schedule's cost", () => {
  /** Intl calls made by `fn` (every zone lookup formats an instant). */
  const intlCalls = (fn: () => void): number => {
    const proto = Intl.DateTimeFormat.prototype;
    const original = proto.formatToParts;
    let calls = 0;
    proto.formatToParts = function (this: Intl.DateTimeFormat, date?: Date | number) {
      calls++;
      return original.call(this, date);
    };
    try {
      fn();
    } finally {
      proto.formatToParts = original;
    }
    return calls;
  };

  it("an every-second cron lists 100 runs 40 minutes after Berlin's spring change in under 2,000 zone lookups (8.6 million before), and they are right", () => {
    const r = rule("* * * * * *", "Europe/Berlin");
    let runs: number[] = [];
    // Before: every reading of a six-hour search cost four lookups: 8,641,000 for these 100 (27 s).
    const calls = intlCalls(() => (runs = r.take(100, at("2026-03-29T01:40:00Z"))));
    expect(calls).toBeLessThan(2_000);
    expect(isos([runs[0]!, runs[99]!])).toEqual(["2026-03-29T01:40:01.000Z", "2026-03-29T01:41:40.000Z"]);
  });

  it("resolves every reading around changes in several zones as the lookup through Intl does", async () => {
    const { resolveReading, ZoneWindow } = await import("../src/schedules/zone.js");
    const cases: Array<[string, string]> = [
      ["Europe/Berlin", "2026-03-29T01:00:00Z"], ["Europe/Berlin", "2026-10-25T01:00:00Z"], ["America/New_York", "2026-03-08T07:00:00Z"],
      ["America/New_York", "2026-11-01T06:00:00Z"], ["Australia/Lord_Howe", "2026-04-04T15:00:00Z"], ["Antarctica/Troll", "2026-03-29T01:00:00Z"],
      ["Asia/Kathmandu", "2026-06-01T00:00:00Z"], ["UTC", "2026-06-01T00:00:00Z"],
    ];
    for (const [zone, change] of cases) {
      const window = ZoneWindow.around(at(change), zone)!;
      for (let reading = at(change) - 4 * 3_600_000; reading <= at(change) + 4 * 3_600_000; reading += 7 * 60_000 + 13_000) {
        expect(window.covers(reading)).toBe(true);
        expect(window.resolve(reading), `${zone} ${new Date(reading).toISOString()}`).toEqual(resolveReading(reading, zone));
      }
    }
  });
});

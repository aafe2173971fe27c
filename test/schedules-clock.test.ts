// Schedules through whole ticks on a fake clock against the real server: DST nights in New York
// and London, and each missed-occurrence policy after an outage.
import { describe, expect, it } from "vitest";
import { type ScheduleDefinition } from "../src/index.js";
import { hourly, MIN, schedulesFixture, tickThrough } from "./support/schedules-fixture.js";

const { world } = await schedulesFixture("schedules_clock");

describe("DST through whole ticks", () => {
  const ticksAcross = async (zone: string, from: string, to: string) => {
    const w = await world(from);
    const jobs = w.make([
      hourly("hourly", { timezone: zone }),
      { name: "at0130", cron: "30 1 * * *", timezone: zone, job: "report", payload: { kind: "a" } },
      { name: "at0230", cron: "30 2 * * *", timezone: zone, job: "report", payload: { kind: "b" } },
    ]);
    // A tick every 5 minutes, like a platform cron, for 6 hours.
    await tickThrough(jobs, w, from, to, 5 * MIN);
    const by = (name: string) => w.runs.filter((r) => r.startsWith(`schedule:${name}:`)).map((r) => r.slice(`schedule:${name}:`.length));
    return { hourly: by("hourly"), at0130: by("at0130"), at0230: by("at0230"), all: w.runs };
  };
  const hours = (day: string, hs: string[]) => hs.map((hh) => `${day}T${hh}:00:00.000Z`);

  it("America/New_York spring-forward: every real hour; 02:30 runs once, at 03:30 EDT", async () => {
    const r = await ticksAcross("America/New_York", "2024-03-10T04:01:00Z", "2024-03-10T10:01:00Z");
    expect(r.hourly).toEqual(hours("2024-03-10", ["05", "06", "07", "08", "09", "10"]));
    expect(r.at0130).toEqual(["2024-03-10T06:30:00.000Z"]);
    expect(r.at0230).toEqual(["2024-03-10T07:30:00.000Z"]);
    expect(new Set(r.all).size).toBe(r.all.length);
  });

  it("America/New_York fall-back: every real hour, both 01:00s; 01:30 runs once", async () => {
    const r = await ticksAcross("America/New_York", "2024-11-03T03:01:00Z", "2024-11-03T09:01:00Z");
    expect(r.hourly).toEqual(hours("2024-11-03", ["04", "05", "06", "07", "08", "09"]));
    expect(r.at0130).toEqual(["2024-11-03T05:30:00.000Z"]);
    expect(r.at0230).toEqual(["2024-11-03T07:30:00.000Z"]);
    expect(new Set(r.all).size).toBe(r.all.length);
  });

  it("Europe/London, both transitions", async () => {
    const spring = await ticksAcross("Europe/London", "2024-03-30T23:01:00Z", "2024-03-31T05:01:00Z");
    expect(spring.hourly).toEqual(hours("2024-03-31", ["00", "01", "02", "03", "04", "05"]));
    // 01:30 GMT does not exist: 02:30 BST (01:30Z), the same instant as the real 02:30 BST, once each.
    expect(spring.at0130).toEqual(["2024-03-31T01:30:00.000Z"]);
    expect(spring.at0230).toEqual(["2024-03-31T01:30:00.000Z"]);
    const autumn = await ticksAcross("Europe/London", "2024-10-26T23:01:00Z", "2024-10-27T05:01:00Z");
    expect(autumn.hourly).toEqual(hours("2024-10-27", ["00", "01", "02", "03", "04", "05"]));
    expect(autumn.at0130).toEqual(["2024-10-27T00:30:00.000Z"]);
    expect(autumn.at0230).toEqual(["2024-10-27T02:30:00.000Z"]);
  });
});

describe("missed occurrences after an outage", () => {
  const outage = async (missed: ScheduleDefinition["missed"]) => {
    const w = await world("2024-05-01T09:59:30Z");
    const jobs = w.make([hourly("o", { missed })]);
    await jobs.tick({ budgetMs: 5_000 });
    w.set("2024-05-01T10:00:30Z");
    await jobs.tick({ budgetMs: 5_000 });
    // No tick from 10:00:30 until 13:20: 11, 12 and 13 o'clock were missed.
    w.set("2024-05-01T13:20:00Z");
    await Promise.all([jobs.tick({ budgetMs: 5_000 }), jobs.tick({ budgetMs: 5_000 })]);
    w.set("2024-05-01T14:00:30Z");
    await jobs.tick({ budgetMs: 5_000 });
    // Which occurrences ran, in time order: two racing ticks run them concurrently, in no fixed order.
    return w.runs.map((r) => r.slice("schedule:o:2024-05-01T".length, -".000Z".length - 3)).sort();
  };

  it("skip (default): none of the missed ones, then the next on time", async () => {
    expect(await outage(undefined)).toEqual(["10:00", "14:00"]);
  });
  it("latest: the most recent missed one once", async () => {
    expect(await outage("latest")).toEqual(["10:00", "13:00", "14:00"]);
  });
  it("catchUp: each missed one up to the cap (the most recent n)", async () => {
    expect(await outage({ catchUp: 2 })).toEqual(["10:00", "12:00", "13:00", "14:00"]);
    expect(await outage({ catchUp: 10 })).toEqual(["10:00", "11:00", "12:00", "13:00", "14:00"]);
  });
});

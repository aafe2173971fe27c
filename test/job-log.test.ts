// ctx.log can never fail a run: fields JSON cannot hold, a getter that throws, a logger that throws.
// And the run's own fields (jobId, ...) and the line's level and message are never overwritten.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createJobs, defineJob, jsonLogger, type Logger } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("job_log");

const tickWith = async (logger: Logger, handler: (ctx: { log: (level: "info", msg: string, fields?: Record<string, unknown>) => void }) => void) => {
  const job = defineJob({ name: "logs", schema: z.object({}), maxAttempts: 1, handler: (_p, ctx) => handler(ctx) });
  const setup = await h.isolated([job]);
  const jobs = createJobs({ db: h.main, jobs: [job], settings: { tablePrefix: setup.settings.tablePrefix }, logger });
  const { id } = await jobs.enqueue("logs", {});
  return { id, report: await jobs.tick({ budgetMs: 3_000 }), tables: jobs.tables };
};

describe("ctx.log", () => {
  it("writes fields JSON cannot hold (a bigint, a cycle) instead of failing the run", async () => {
    const lines: string[] = [];
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const { report } = await tickWith(jsonLogger("info", (l) => lines.push(l)), (ctx) => ctx.log("info", "odd fields", { n: 10n, cyclic }));
    expect(report).toMatchObject({ succeeded: 1, deadLettered: 0 });
    const line = JSON.parse(lines.find((l) => l.includes("odd fields"))!);
    expect(line).toMatchObject({ level: "info", msg: "odd fields", n: "10", cyclic: { a: 1, self: "[circular]" } });
  });

  it("writes a line as the history keeps it: a huge field dropped (said), a huge message clipped (a 5 MB field was a 5 MB line)", async () => {
    const lines: string[] = [];
    const { report } = await tickWith(jsonLogger("info", (l) => lines.push(l)), (ctx) => {
      ctx.log("info", "huge field", { blob: "h".repeat(5_000_000), small: 1 });
      ctx.log("info", "m".repeat(2_000_000));
    });
    expect(report).toMatchObject({ succeeded: 1 });
    const huge = JSON.parse(lines.find((l) => l.includes("huge field"))!);
    expect(huge).toMatchObject({ msg: "huge field", fieldsDropped: true, jobName: "logs" });
    expect(huge).not.toHaveProperty("blob");
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(20_000);
  });

  it("gives a logger of one's own the handler's values when nothing was cut (an Error field, for its message and stack)", async () => {
    const got: unknown[] = [];
    const mine: Logger = { log: (_level, msg, fields) => void (msg === "with error" && got.push(fields?.err)) };
    await tickWith(mine, (ctx) => ctx.log("info", "with error", { err: new Error("boom") }));
    expect(got).toHaveLength(1);
    expect(got[0]).toBeInstanceOf(Error);
  });

  it("writes an object met twice but not inside itself in full both times (it was written as a cycle)", async () => {
    const lines: string[] = [];
    const user = { id: 7 };
    await tickWith(jsonLogger("info", (l) => lines.push(l)), (ctx) => ctx.log("info", "shared", { from: user, to: user, pair: [user, user] }));
    const line = JSON.parse(lines.find((l) => l.includes('"shared"'))!);
    expect(line).toMatchObject({ from: { id: 7 }, to: { id: 7 }, pair: [{ id: 7 }, { id: 7 }] });
  });

  it("drops fields whose getter throws, and survives a logger that throws", async () => {
    const lines: string[] = [];
    const hostile = Object.defineProperty({ kept: "yes", big: 10n }, "boom", { enumerable: true, get: () => { throw new Error("getter"); } });
    const { report } = await tickWith(jsonLogger("info", (l) => lines.push(l)), (ctx) => ctx.log("info", "hostile", hostile));
    expect(report).toMatchObject({ succeeded: 1 });
    // Only the field that threw is dropped (one getter that threw lost the line's other fields).
    const line = JSON.parse(lines.find((l) => l.includes("hostile"))!);
    expect(line).toMatchObject({ msg: "hostile", fieldsDropped: true, jobName: "logs", kept: "yes", big: "10" });
    expect(line).not.toHaveProperty("boom");
    const throwing: Logger = { log: () => { throw new Error("sink down"); } };
    expect((await tickWith(throwing, (ctx) => ctx.log("info", "x"))).report).toMatchObject({ succeeded: 1 });
  });

  it("drops only a field that cannot be written below its top level (a nested getter or toJSON that throws), keeping the run's fields", async () => {
    const lines: string[] = [];
    const nested = { get bad() { throw new Error("getter"); } };
    const json = { toJSON: () => { throw new Error("toJSON"); } };
    const { id, report, tables } = await tickWith(jsonLogger("info", (l) => lines.push(l)), (ctx) => ctx.log("info", "deep", { ok: 1, nested, json, after: "yes" }));
    expect(report).toMatchObject({ succeeded: 1 });
    // Before: {"time","level","msg","fieldsDropped":true}, without the job's id, name and attempt.
    const line = JSON.parse(lines.find((l) => l.includes('"deep"'))!);
    expect(line).toMatchObject({ msg: "deep", fieldsDropped: true, jobId: id, jobName: "logs", attempt: 1, ok: 1, after: "yes" });
    expect(line).not.toHaveProperty("nested");
    expect(line).not.toHaveProperty("json");
    // The run's history keeps the line the same way (it kept only { fieldsDropped: true }).
    const [run] = await h.rows<{ logs: Array<{ msg: string; fields?: Record<string, unknown> }> }>(`SELECT logs FROM ${tables.runs} WHERE job_id = $1`, [id]);
    expect(run!.logs.find((l) => l.msg === "deep")!.fields).toEqual({ ok: 1, after: "yes", fieldsDropped: true });
  });

  it("takes a level that is not one of the four (plain JavaScript) as info, in the log and in the history, without failing the run", async () => {
    const lines: string[] = [];
    const throwing = { toJSON: () => { throw new Error("lvl"); } };
    const { id, report, tables } = await tickWith(jsonLogger("info", (l) => lines.push(l)), (ctx) => {
      for (const level of [1n, throwing, "in\u0000fo"]) ctx.log(level as never, "odd level");
    });
    expect(report).toMatchObject({ succeeded: 1, deadLettered: 0 });
    expect(lines.filter((l) => l.includes('"odd level"')).map((l) => JSON.parse(l).level)).toEqual(["info", "info", "info"]);
    const [run] = await h.rows<{ outcome: string; logs: Array<{ level: string; msg: string }> }>(`SELECT outcome, logs FROM ${tables.runs} WHERE job_id = $1`, [id]);
    expect(run!.outcome).toBe("succeeded");
    expect(run!.logs.filter((l) => l.msg === "odd level").map((l) => l.level)).toEqual(["info", "info", "info"]);
  });

  it("keeps the run's fields and the line's level and message over the handler's", async () => {
    const lines: string[] = [];
    const { id } = await tickWith(jsonLogger("info", (l) => lines.push(l)), (ctx) => ctx.log("info", "mine", { jobId: "spoofed", level: "error", msg: "other", time: "then" }));
    const line = JSON.parse(lines.find((l) => l.includes("mine"))!);
    expect(line).toMatchObject({ level: "info", msg: "mine", jobId: id, jobName: "logs" });
    expect(line.time).not.toBe("then");
    expect(Object.keys(line).slice(0, 3)).toEqual(["time", "level", "msg"]);
  });
});

// What handlers throw cannot poison a tick: every text is made storable before it reaches a
// statement, and a statement the server refuses cannot take the healthy settlements of its batch with it.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type Db, defineJob, PermanentJobError } from "../src/index.js";
import { errorText, MAX_ERROR_CHARS, safeJson, storableText } from "../src/error-text.js";
import { harness } from "./support/harness.js";

const h = await harness("poison");

const healthyAndOne = async (thrown: () => unknown, client?: Db) => {
  const ok = defineJob({ name: "healthy", schema: z.object({ n: z.number() }), handler: () => {} });
  const bad = defineJob({ name: "poison", schema: z.object({}), maxAttempts: 3, backoff: { baseMs: 60_000 }, handler: () => { throw thrown(); } });
  const setup = await h.isolated([ok, bad]);
  const jobs = client ? h.make([ok, bad], { tablePrefix: setup.settings.tablePrefix }, client) : setup;
  const { id } = await jobs.enqueue("poison", {});
  await jobs.enqueueMany(Array.from({ length: 5 }, (_, n) => ({ job: "healthy" as const, payload: { n } })));
  // One statement settles all six: the poison's retry rides with five completions.
  const report = await jobs.tick({ budgetMs: 10_000, concurrency: 6 });
  const [row] = await h.rows<{ status: string; attempt: number; last_error: string }>(
    `SELECT status, attempt, last_error FROM ${jobs.tables.queue} WHERE id = $1`, [id]);
  const left = await h.rows(`SELECT id FROM ${jobs.tables.queue} WHERE job_name = 'healthy'`);
  return { report, row: row!, healthyLeft: left.length, jobs };
};

describe("unstorable error texts", () => {
  it("U+0000 in a message (JSON.parse of a string holding it) is stored, and the batch settles", async () => {
    const r = await healthyAndOne(() => {
      try {
        JSON.parse("\u0000{}");
      } catch (e) {
        return e;
      }
      return new Error("unreachable");
    });
    expect(r.report).toMatchObject({ claimed: 6, succeeded: 5, retried: 1, leaseLost: 0 });
    expect(r.healthyLeft).toBe(0);
    expect(r.row).toMatchObject({ status: "queued", attempt: 1 });
    expect(r.row.last_error).toMatch(/^SyntaxError: /);
    expect(r.row.last_error).not.toContain("\u0000");
    expect(r.row.last_error).toContain("\uFFFD");
  });

  it("a lone surrogate in a message", async () => {
    const r = await healthyAndOne(() => new Error("bad \ud800 half"));
    expect(r.report).toMatchObject({ succeeded: 5, retried: 1 });
    expect(r.row.last_error).toBe("bad \uFFFD half");
  });

  it("a message longer than the clip, cut where a surrogate pair sits", async () => {
    // The pair straddles the clip point: a naive slice keeps half of it.
    const message = `${"x".repeat(MAX_ERROR_CHARS - 2)}😀tail`;
    const r = await healthyAndOne(() => new Error(message));
    expect(r.report).toMatchObject({ succeeded: 5, retried: 1 });
    expect(r.row.last_error.length).toBeLessThanOrEqual(MAX_ERROR_CHARS);
    expect(r.row.last_error.endsWith("…")).toBe(true);
    expect(r.row.last_error).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it("a settle statement the server refuses is retried one by one: the healthy five still settle in this tick", async () => {
    // Fault injection in front of the real server: any statement that carries this error text is refused
    // the way PostgreSQL refuses a bad value, even alone, until its texts are replaced by a plain note.
    const marker = "refuse-me";
    const refusing: Db = {
      query: (text, params, options) =>
        params?.some((p) => typeof p === "string" && p.includes(marker))
          ? Promise.reject(Object.assign(new Error("invalid input syntax for type json"), { code: "22P02" }))
          : h.db.query(text, params, options),
    };
    const r = await healthyAndOne(() => new Error(marker), refusing);
    expect(r.report).toMatchObject({ claimed: 6, succeeded: 5, retried: 1, leaseLost: 0 });
    expect(r.healthyLeft).toBe(0);
    expect(r.row).toMatchObject({ status: "queued", attempt: 1 });
    expect(r.row.last_error).toBe("the error of this attempt could not be stored (SQLSTATE 22P02)");
    expect(r.jobs.logs.some((e) => e.msg === "settle statement refused a value; settling one by one")).toBe(true);
  });
});

describe("thrown values that throw when read", () => {
  it("an error whose name getter throws itself fails only its own attempt; the batch settles", async () => {
    class SelfThrowingName extends Error {
      override get name(): string {
        throw this;
      }
    }
    const r = await healthyAndOne(() => new SelfThrowingName("self"));
    expect(r.report).toMatchObject({ claimed: 6, succeeded: 5, retried: 1, leaseLost: 0 });
    expect(r.healthyLeft).toBe(0);
    expect(r.row).toMatchObject({ status: "queued", attempt: 1 });
    expect(r.row.last_error).toBe("self");
  });

  it("an error whose message getter throws is recorded as an error that could not be read, not as empty text", async () => {
    const r = await healthyAndOne(() => Object.defineProperty(new Error("x"), "message", { get: () => { throw new Error("message getter"); } }));
    expect(r.report).toMatchObject({ claimed: 6, succeeded: 5, retried: 1, leaseLost: 0 });
    expect(r.row.last_error).toBe("[an error that could not be read]");
  });

  it("a Proxy whose every trap throws", async () => {
    const trap = () => {
      throw new Error("trap");
    };
    const r = await healthyAndOne(() => new Proxy({}, { get: trap, getPrototypeOf: trap, has: trap, ownKeys: trap }));
    expect(r.report).toMatchObject({ claimed: 6, succeeded: 5, retried: 1, leaseLost: 0 });
    expect(r.row.last_error).toBe("[an error that could not be read]");
  });

  it("a schema that throws a value String() cannot convert fails its job's attempt (retried), and the jobs claimed beside it run", async () => {
    const v1 = defineJob({ name: "reshaped", schema: z.object({ n: z.number() }), handler: () => {} });
    const ok = defineJob({ name: "healthy", schema: z.object({ n: z.number() }), handler: () => {} });
    const setup = await h.isolated([v1, ok]);
    const { id } = await setup.enqueue("reshaped", { n: 1 }, { priority: 10 });
    await setup.enqueueMany(Array.from({ length: 3 }, (_, n) => ({ job: "healthy" as const, payload: { n } })));
    // The next deploy's schema: its refine throws something with no string form.
    const v2 = defineJob({
      name: "reshaped",
      schema: z.object({ n: z.number() }).refine(() => {
        throw Object.create(null);
      }),
      handler: () => {},
    });
    const next = h.make([v2, ok], { tablePrefix: setup.settings.tablePrefix });
    const report = await next.tick({ budgetMs: 10_000, concurrency: 4 });
    expect(report).toMatchObject({ claimed: 4, succeeded: 3, retried: 1, deadLettered: 0, leaseLost: 0 });
    const [row] = await h.rows<{ status: string; error: string }>(`SELECT status, last_error AS error FROM ${next.tables.queue} WHERE id = $1`, [id]);
    expect(row).toMatchObject({ status: "queued" });
    expect(row!.error).toContain("the schema failed");
    // And an enqueue under that schema is refused with a code, not a TypeError.
    await expect(next.enqueue("reshaped", { n: 2 })).rejects.toMatchObject({ code: "invalid_payload" });
  });
});

describe("a value wrong in many places", () => {
  it("a return value refused by its output schema in 100,000 places is described by its first 10 issues", async () => {
    const wide = defineJob({ name: "wide", schema: z.object({}), output: z.array(z.string()), maxAttempts: 1, handler: () => Array.from({ length: 100_000 }, (_, n) => n) as unknown as string[] });
    const jobs = await h.isolated([wide]);
    const { id } = await jobs.enqueue("wide", {});
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ deadLettered: 1 });
    const [letter] = await h.rows<{ last_error: string }>(`SELECT last_error FROM ${jobs.tables.deadLetters} WHERE id = $1`, [id]);
    expect(letter!.last_error).toMatch(/"code":"invalid_type"}\] and 99990 more issues$/);
    // The same bound for a payload refused at enqueue: the error's details name 100 issues and how many more.
    const list = defineJob({ name: "list", schema: z.array(z.string()), handler: () => {} });
    const refusing = await h.isolated([list]);
    const error = await refusing.enqueue("list", Array.from({ length: 5_000 }, (_, n) => n) as unknown as string[]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "invalid_payload" });
    const details = (error as { details: { issues: unknown[] } }).details;
    // An output schema that throws a value with no string form: its text, not a TypeError's.
    const throwing = defineJob({ name: "throwing-output", schema: z.object({}), maxAttempts: 1, output: z.object({}).refine(() => { throw Object.create(null); }), handler: () => ({}) });
    const outputs = await h.isolated([throwing]);
    const thrown = await outputs.enqueue("throwing-output", {});
    expect(await outputs.tick({ budgetMs: 10_000 })).toMatchObject({ deadLettered: 1 });
    const [stored] = await h.rows<{ last_error: string }>(`SELECT last_error FROM ${outputs.tables.deadLetters} WHERE id = $1`, [thrown.id]);
    expect(stored!.last_error).toBe("OutputMismatch: the output schema of throwing-output failed: {}");
    // A PermanentJobError thrown in it is permanent, as from a payload schema: no retry.
    const permanent = defineJob({ name: "permanent-output", schema: z.object({}), maxAttempts: 3, output: z.object({}).transform(() => { throw new PermanentJobError("never valid"); }), handler: () => ({}) });
    const perm = await h.isolated([permanent]);
    const p = await perm.enqueue("permanent-output", {});
    expect(await perm.tick({ budgetMs: 10_000 })).toMatchObject({ deadLettered: 1, retried: 0 });
    const [letter2] = await h.rows<{ reason: string; last_error: string }>(`SELECT reason, last_error FROM ${perm.tables.deadLetters} WHERE id = $1`, [p.id]);
    expect(letter2).toMatchObject({ reason: "permanent", last_error: expect.stringContaining("never valid") });
    expect(details.issues).toHaveLength(101);
    expect(details.issues[100]).toMatchObject({ message: "and 4900 more issues", code: "more_issues" });
  });
});

describe("what a thrown value says", () => {
  it("an AggregateError's inner errors, a cause and a message that is not a string are kept", () => {
    const aggregate = new AggregateError([new Error("first"), new TypeError("second")], "many failed");
    expect(errorText(aggregate)).toBe("AggregateError: many failed [2 errors: first; TypeError: second]");
    expect(errorText(new Error("outer", { cause: new RangeError("inner") }))).toBe("outer (cause: RangeError: inner)");
    expect(errorText(Object.assign(new Error(), { message: 42 }))).toBe("42");
    expect(errorText(Object.assign(new Error(), { message: { why: "x" } }))).toBe('{"why":"x"}');
    const many = new AggregateError(Array.from({ length: 9 }, (_, n) => new Error(`e${n}`)), "nine");
    expect(errorText(many)).toBe("AggregateError: nine [9 errors: e0; e1; e2; e3; e4; …]");
  });


  it("keeps the message of a thrown non-Error, and renders other values as safe JSON", async () => {
    const circular: Record<string, unknown> = { message: "circular boom" };
    circular.self = circular;
    const r = await healthyAndOne(() => circular);
    expect(r.row.last_error).toBe("circular boom");

    const noMessage: Record<string, unknown> = { code: 42, detail: "x" };
    noMessage.self = noMessage;
    expect(errorText(noMessage)).toBe('{"code":42,"detail":"x","self":"[circular]"}');
    expect(errorText(42)).toBe("42");
    expect(errorText(null)).toBe("null");
    expect(errorText(undefined)).toBe("undefined");
    expect(errorText("plain \u0000 text")).toBe("plain \uFFFD text");
    expect(errorText(Object.assign(new TypeError("bad"), {}))).toBe("TypeError: bad");
    expect(errorText({ name: "UpstreamError", message: "503" })).toBe("UpstreamError: 503");
    expect(safeJson({ big: 10n, f() {} })).toBe('{"big":"10n","f":"[function f]"}');
    const throwing = { toJSON() { throw new Error("nope"); } };
    expect(safeJson(throwing)).toBe("[unserializable: nope]");
  });

  it("clips on whole characters and never grows past the limit", () => {
    expect(storableText("ab😀cd", 4)).toBe("ab…");
    expect(storableText("abc😀", 5)).toBe("abc😀");
    expect(storableText("a".repeat(10), 5)).toBe("aaaa…");
    expect(storableText("\udc00x")).toBe("\uFFFDx");
  });
});

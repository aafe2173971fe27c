// What handlers throw cannot poison a tick: every text is made storable before it reaches a
// statement, and a statement the server refuses cannot take the healthy settlements of its batch with it.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type Db, defineJob } from "../src/index.js";
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

describe("what a thrown value says", () => {
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

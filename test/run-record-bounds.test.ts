// What the run history records of a return value and of ctx.log lines costs work bounded by the
// limit (JOBS_MAX_OUTPUT_BYTES, the log ring's 16 KiB), whatever the size of the value; and what it
// stores within the limit is what JSON.stringify gives, made storable.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { storableText } from "../src/error-text.js";
import { boundedJson } from "../src/tick/output-json.js";
import { LogRing, MAX_LOG_BYTES, recordOutput } from "../src/tick/run-record.js";
import { harness } from "./support/harness.js";
import { exponentGrowth } from "../src/payload.js";

const h = await harness("run_record_bounds");

/** An array-like of `length` elements made by `make`, counting every element (and index) the walk touches. */
const countingArray = (length: number, make: (i: number) => unknown) => {
  const counter = { reads: 0 };
  const proxy = new Proxy(new Array<unknown>(length), {
    get: (target, key, receiver) => {
      if (typeof key === "string" && /^\d+$/.test(key)) return (counter.reads++, make(Number(key)));
      return Reflect.get(target, key, receiver);
    },
    has: (target, key) => (typeof key === "string" && /^\d+$/.test(key) ? (counter.reads++, Number(key) < length) : Reflect.has(target, key)),
  });
  return { proxy, counter };
};

/** An object of `count` keys whose values are made by `make` on each read, counting the reads. */
const countingObject = (count: number, make: (i: number) => unknown) => {
  const counter = { reads: 0 };
  const keys = Array.from({ length: count }, (_, i) => `k${i}`);
  const proxy = new Proxy<Record<string, unknown>>({}, {
    ownKeys: () => keys,
    getOwnPropertyDescriptor: (_t, key) => (typeof key === "string" && key.startsWith("k") ? { enumerable: true, configurable: true, writable: true, value: undefined } : undefined),
    get: (_t, key) => (typeof key === "string" && key.startsWith("k") ? (counter.reads++, make(Number(key.slice(1)))) : undefined),
  });
  return { proxy, counter };
};

/** What the history stores (the bound of its bytes, for cutting batches, is checked on its own below). */
const stored = (value: unknown, maxBytes = 65_536) => {
  const { bytes: _bytes, ...kept } = recordOutput(value, maxBytes);
  return kept;
};

describe("recordOutput: bounded by maxBytes", () => {
  it("stops reading an array once its JSON passes maxBytes", () => {
    const { proxy, counter } = countingArray(400, () => "x".repeat(100));
    expect(stored(proxy, 1_000)).toEqual({ outputTruncated: true });
    expect(counter.reads).toBeLessThanOrEqual(12);
  });

  it("reads no element of an array whose shortest possible JSON is already too long", () => {
    const { proxy, counter } = countingArray(1_000_000, () => 0);
    expect(stored(proxy, 65_536)).toEqual({ outputTruncated: true });
    expect(counter.reads).toBe(0);
  });

  it("stops reading an object's properties once its JSON passes maxBytes", () => {
    const { proxy, counter } = countingObject(20_000, (i) => ({ i, pad: "p".repeat(50) }));
    expect(stored(proxy, 1_000)).toEqual({ outputTruncated: true });
    expect(counter.reads).toBeLessThanOrEqual(20);
  });

  it("calls toJSON on as many elements as fit, not on all of them", () => {
    let calls = 0;
    const items = Array.from({ length: 1_000 }, () => ({ toJSON: () => (calls++, "y".repeat(100)) }));
    expect(stored(items, 1_000)).toEqual({ outputTruncated: true });
    expect(calls).toBeLessThanOrEqual(12);
  });

  it("never copies a Buffer whose bytes cannot fit: its toJSON (an array of every byte) is not called", () => {
    const buffer = Buffer.alloc(2_000_000);
    // Buffer.prototype.toJSON reads this.length; count those reads.
    let lengthReads = 0;
    const length = buffer.length;
    Object.defineProperty(buffer, "length", { get: () => (lengthReads++, length) });
    expect(stored(buffer)).toEqual({ outputTruncated: true });
    expect(lengthReads).toBe(0);
  });

  it("marks a large Buffer, typed array, string or array of small objects truncated", () => {
    expect(stored(Buffer.alloc(30_000_000))).toEqual({ outputTruncated: true });
    expect(stored(new Float64Array(10_000_000))).toEqual({ outputTruncated: true });
    expect(stored({ s: "z".repeat(50_000_000) })).toEqual({ outputTruncated: true });
    expect(stored(Array.from({ length: 200_000 }, (_, i) => ({ i })))).toEqual({ outputTruncated: true });
  });

  it("keeps a value of exactly maxBytes bytes of JSON, and marks one byte more truncated (UTF-8 bytes, not characters)", () => {
    const ascii = { s: "a".repeat(100 - 8) }; // {"s":"…"} is 8 bytes around the text
    expect(JSON.stringify(ascii).length).toBe(100);
    expect(stored(ascii, 100)).toEqual({ output: ascii, outputTruncated: false });
    expect(stored(ascii, 99)).toEqual({ outputTruncated: true });
    const wide = ["é".repeat(46)]; // ["…"]: 4 bytes + 92
    expect(new TextEncoder().encode(JSON.stringify(wide)).length).toBe(96);
    expect(stored(wide, 96)).toEqual({ output: wide, outputTruncated: false });
    expect(stored(wide, 95)).toEqual({ outputTruncated: true });
    expect(stored(wide, 60).outputTruncated).toBe(true);
  });

  it("refuses a Buffer or typed array unread only when even its shortest JSON is over the limit", () => {
    const buffer = Buffer.alloc(100); // {"type":"Buffer","data":[0,0,...]}: 2n + 26 characters
    expect(JSON.stringify(buffer).length).toBe(226);
    expect(stored(buffer, 226)).toEqual({ output: JSON.parse(JSON.stringify(buffer)), outputTruncated: false });
    expect(stored(buffer, 225)).toEqual({ outputTruncated: true });
    const typed = new Uint8Array(10); // {"0":0,...}: 6n + 1 characters
    expect(JSON.stringify(typed).length).toBe(61);
    expect(stored(typed, 61).outputTruncated).toBe(false);
    expect(stored(typed, 60).outputTruncated).toBe(true);
  });

  it("decides as the UTF-8 bytes of JSON.stringify as stored decide (a number with an exponent in all its digits), for random values and limits", () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const pick = <T,>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
    const text = () => Array.from({ length: Math.floor(random() * 12) }, () => pick(["a", "é", "😀", "\"", "\\", "\n", "\u0007", "€"])).join("");
    const make = (depth: number): unknown => {
      const kind = depth > 3 ? Math.floor(random() * 4) : Math.floor(random() * 7);
      if (kind === 0) return text();
      if (kind === 1) return pick([0, -1.25, 1e300, NaN, 42]);
      if (kind === 2) return pick([null, true, false, undefined]);
      if (kind === 3) return new Date(Math.floor(random() * 1e12));
      if (kind === 4) return Array.from({ length: Math.floor(random() * 5) }, () => make(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 5) }, () => [text(), make(depth + 1)]));
    };
    for (let i = 0; i < 2_000; i++) {
      const value = make(0);
      const json = JSON.stringify(value);
      if (json === undefined) continue;
      const bytes = new TextEncoder().encode(json).length + exponentGrowth(json);
      const maxBytes = Math.max(1, bytes + Math.floor(random() * 21) - 10);
      const record = stored(value, maxBytes);
      if (bytes > maxBytes) expect(record, json).toEqual({ outputTruncated: true });
      else expect(JSON.stringify(record.output), json).toBe(json);
    }
  });

  it("counts exactly the characters of the JSON of the copy it returns, as stored", () => {
    const values: unknown[] = [
      { a: "quote \" back \\ slash \n\t\u0001", "k\"ey": [1, -0, 1.5e-9, NaN, null, true, false, undefined, () => 1], u: "é😀\u0000\uDC00" },
      JSON.parse('{"__proto__":{"x":[]},"":{}}'),
      [[], {}, [[]], new Date(0), 10n, Buffer.from("ab"), new Int16Array([-1, 300]), new Number(-5), new String("s\n")],
    ];
    for (const value of values) {
      const copy = boundedJson(value, 100_000);
      expect(copy.ok).toBe(true);
      if (copy.ok) expect(copy.chars).toBe(JSON.stringify(copy.value).length + exponentGrowth(JSON.stringify(copy.value)));
    }
  });
});

describe("recordOutput: the bytes it adds to a statement", () => {
  it("bounds the UTF-8 of the output's JSON from above, never past maxBytes", () => {
    for (const value of [{ a: 1 }, "é".repeat(1_000), ["😀", "x"], { deep: { er: [1, 2, 3] } }]) {
      const r = recordOutput(value, 65_536);
      expect(r.bytes!).toBeGreaterThanOrEqual(new TextEncoder().encode(JSON.stringify(r.output)).length);
      expect(r.bytes!).toBeLessThanOrEqual(65_536);
    }
    expect(recordOutput("x".repeat(30_000), 65_536).bytes).toBe(65_536);
  });
});

describe("recordOutput: what JSON.stringify gives, made storable", () => {
  class Point {
    constructor(readonly x: number, readonly y: number) {}
    get norm() {
      return Math.hypot(this.x, this.y);
    }
  }
  const json = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

  it("matches JSON.stringify for values it can serialise", () => {
    const values: unknown[] = [
      { a: 1, b: [1, "two", null, true, { c: -0 }], d: new Date(Date.UTC(2026, 0, 2)), e: undefined, f: () => 1, g: Symbol("s") },
      [undefined, () => 1, Symbol("s"), NaN, Infinity, -Infinity, 1e21, 5e-7],
      new Point(3, 4),
      [new Map([[1, 2]]), new Set([1]), /re/g, new Error("e")],
      { 2: "two", 1: "one", b: "b", a: "a" },
      { nested: { toJSON: (key: string) => `key=${key}` }, list: [{ toJSON: (key: string) => `key=${key}` }] },
      Buffer.from([1, 2, 255]),
      Buffer.alloc(0),
      new Uint8Array([1, 2]),
      new Float64Array([1.5, NaN]),
      new DataView(new ArrayBuffer(4)),
      { u: new Uint16Array(3), buf: Buffer.from("hi") },
      [new Number(3), new String("s"), new Boolean(false)],
      "plain",
      42,
      null,
      true,
      // eslint-disable-next-line no-sparse-arrays
      [1, , 3],
      Object.assign(Object.create({ inherited: 1 }) as object, { own: 2 }),
      { fn: Object.assign(() => 1, { toJSON: () => "a function's toJSON" }) },
    ];
    for (const value of values) {
      const record = stored(value);
      expect(record.outputTruncated).toBe(false);
      expect(JSON.stringify(record.output), JSON.stringify(value)).toBe(JSON.stringify(value));
    }
  });

  it("stores an own __proto__ key as JSON.stringify writes it", () => {
    const value = JSON.parse('{"__proto__":{"x":1},"y":2}') as unknown;
    const record = stored(value);
    expect(record.outputTruncated).toBe(false);
    expect(JSON.stringify(record.output)).toBe('{"__proto__":{"x":1},"y":2}');
  });

  it("calls toJSON once per value, not again on what it returns", () => {
    expect(stored({ a: 1, toJSON() { return this; } })).toEqual({ output: { a: 1 }, outputTruncated: false });
    const twice = { toJSON: () => ({ toJSON: () => "again", k: 1 }) };
    expect(stored(twice)).toEqual({ output: json(twice), outputTruncated: false });
    expect(json(twice)).toEqual({ k: 1 });
  });

  it("keeps what the history did before for what JSON.stringify cannot serialise", () => {
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    expect(stored(cyclic)).toEqual({ output: { name: "loop", self: "[circular]" }, outputTruncated: false });
    expect(stored({ n: 12345678901234567890n, list: [1n] })).toEqual({ output: { n: "12345678901234567890", list: ["1"] }, outputTruncated: false });
    expect(stored({ text: "a\u0000b", ["k\u0000"]: "\uD800 lone" })).toEqual({ output: { text: "a\uFFFDb", "k\uFFFD": "\uFFFD lone" }, outputTruncated: false });
    expect(stored({ get boom() { throw new Error("getter"); } })).toEqual({ outputTruncated: true });
    expect(stored({ toJSON() { throw new Error("toJSON"); } })).toEqual({ outputTruncated: true });
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(stored(deep)).toEqual({ outputTruncated: true });
    expect(stored(undefined)).toEqual({ outputTruncated: false });
    expect(stored(() => 1)).toEqual({ outputTruncated: false });
    expect(stored({ toJSON: () => undefined })).toEqual({ outputTruncated: false });
    expect(stored(new BigInt64Array([5n]))).toEqual({ output: { 0: "5" }, outputTruncated: false });
  });
});

describe("LogRing", () => {
  it("keeps a message that cannot become a string as a note, never a throw", () => {
    const ring = new LogRing();
    const throwing = { toString: () => { throw new Error("no"); } };
    expect(() => ring.push("info", Object.create(null))).not.toThrow();
    expect(() => ring.push("info", throwing)).not.toThrow();
    expect(() => ring.push("info", { [Symbol.toPrimitive]: () => ({}) })).not.toThrow();
    expect(ring.toArray().map((l) => l.msg)).toEqual(["[unprintable message]", "[unprintable message]", "[unprintable message]"]);
  });

  it("clips a long message as storableText clips the whole, and converts other values with String", () => {
    const ring = new LogRing();
    const long = `${"m".repeat(1_998)}\uD83D\uDE00${"\u0000".repeat(1_000_000)}`;
    ring.push("info", long);
    ring.push("info", 42);
    ring.push("info", { toString: () => "custom" });
    ring.push("info", Symbol("s"));
    expect(ring.toArray().map((l) => l.msg)).toEqual([storableText(long, 2_000), "42", "custom", "Symbol(s)"]);
  });

  it("reads a bounded number of fields, dropping fields too large for the ring", () => {
    const { proxy, counter } = countingObject(20_000, () => "f".repeat(100));
    const ring = new LogRing();
    ring.push("info", "big fields", proxy);
    expect(ring.toArray()[0]).toMatchObject({ msg: "big fields", fields: { fieldsDropped: true } });
    expect(counter.reads).toBeLessThanOrEqual(MAX_LOG_BYTES / 100 + 5);
    ring.push("info", "blob", { blob: "b".repeat(50_000_000) });
    expect(ring.toArray()[1]).toMatchObject({ msg: "blob", fields: { fieldsDropped: true } });
    ring.push("info", "bad", { get boom() { throw new Error("getter"); } });
    ring.push("info", "ok", { n: 1n, nested: { d: new Date(0) } });
    expect(ring.toArray().slice(2)).toMatchObject([
      { msg: "bad", fields: { fieldsDropped: true } },
      { msg: "ok", fields: { n: "1", nested: { d: "1970-01-01T00:00:00.000Z" } } },
    ]);
  });
});

describe("run history through a tick", () => {
  type Run = { outcome: string; output: unknown; output_truncated: boolean; logs: Array<{ msg: string }> | null };
  const runOf = async (j: { tables: { runs: string } }, jobId: string) =>
    (await h.rows<Run>(`SELECT outcome, output, output_truncated, logs FROM ${j.tables.runs} WHERE job_id = $1`, [jobId]))[0];

  it("records a run that returned a 30 MB Buffer as succeeded with its output marked truncated", async () => {
    const big = defineJob({ name: "big", schema: z.object({}), maxAttempts: 1, handler: () => Buffer.alloc(30_000_000) });
    const jobs = await h.isolated([big]);
    const { id } = await jobs.enqueue("big", {});
    expect(await jobs.tick({ budgetMs: 20_000 })).toMatchObject({ succeeded: 1, deadLettered: 0 });
    expect(await runOf(jobs, id)).toMatchObject({ outcome: "succeeded", output: null, output_truncated: true });
  });

  it("stores an own __proto__ key and a toJSON returning this as JSON.stringify does, and a log message that cannot be a string", async () => {
    const odd = defineJob({
      name: "odd",
      schema: z.object({}),
      maxAttempts: 1,
      handler: (_p, ctx) => {
        ctx.log("info", Object.create(null) as string);
        return { parsed: JSON.parse('{"__proto__":{"x":1},"y":2}') as unknown, self: { a: 1, toJSON() { return this; } } };
      },
    });
    const jobs = await h.isolated([odd]);
    const { id } = await jobs.enqueue("odd", {});
    expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ succeeded: 1, deadLettered: 0 });
    const run = await runOf(jobs, id);
    expect(run).toMatchObject({ outcome: "succeeded", output_truncated: false, logs: [{ msg: "[unprintable message]" }] });
    // jsonb orders keys its own way: compare the parsed values, the own __proto__ key included.
    const output = run!.output as { parsed: Record<string, unknown>; self: unknown };
    expect(Object.getOwnPropertyDescriptor(output.parsed, "__proto__")?.value).toEqual({ x: 1 });
    expect(output.parsed.y).toBe(2);
    expect(output.self).toEqual({ a: 1 });
  });
});

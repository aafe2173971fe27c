// What the types say a job takes and gives back, as JSON carries it: checked by tsc (npm run typecheck)
// and, where a value exists, at run time.
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import type { JobInput, JobOutput } from "../src/job.js";

const dated = defineJob({
  name: "dated",
  schema: z.object({ n: z.number() }),
  output: z.object({ at: z.date(), n: z.number(), tags: z.array(z.date()) }),
  handler: ({ n }) => ({ at: new Date(0), n, tags: [new Date(0)] }),
});
const bare = defineJob({ name: "bare", schema: z.object({}), handler: () => 1 });
const nullable = defineJob({ name: "nullable", schema: z.object({ a: z.number() }).nullable(), handler: () => {} });

describe("the types of a job's payload and output", () => {
  it("an output's Date comes back a string, as JSON carries it", () => {
    expectTypeOf<JobOutput<typeof dated, "dated">>().toEqualTypeOf<{ at: string; n: number; tags: string[] }>();
    const back: JobOutput<typeof dated, "dated"> = JSON.parse(JSON.stringify({ at: new Date(0), n: 1, tags: [new Date(0)] }));
    expect(typeof back.at).toBe("string");
  });

  it("an output's bigint comes back a string and a Map or Set an empty object, as the recorded output has them", () => {
    const odd = defineJob({
      name: "odd",
      schema: z.object({}),
      output: z.object({ big: z.bigint(), m: z.map(z.string(), z.number()), tags: z.set(z.string()) }),
      handler: () => ({ big: 1n, m: new Map([["a", 1]]), tags: new Set(["x"]) }),
    });
    expectTypeOf<JobOutput<typeof odd, "odd">>().toEqualTypeOf<{ big: string; m: Record<string, never>; tags: Record<string, never> }>();
  });

  it("an interface's and a class's Date and bigint come back strings, an Error an object of its own properties, undefined null", async () => {
    interface Invoice {
      at: Date;
      total: bigint;
      lines: Array<{ sku: string; at: Date }>;
    }
    class Receipt {
      constructor(readonly id: string, readonly at: Date) {}
      describe(): string {
        return this.id;
      }
    }
    const invoice = defineJob({ name: "invoice", schema: z.object({}), output: z.custom<Invoice>(), handler: () => ({ at: new Date(0), total: 10n, lines: [] }) });
    const receipt = defineJob({ name: "receipt", schema: z.object({}), output: z.instanceof(Receipt), handler: () => new Receipt("r", new Date(0)) });
    const failure = defineJob({ name: "failure", schema: z.object({}), output: z.instanceof(Error), handler: () => new Error("x") });
    const maybe = defineJob({ name: "maybe", schema: z.object({}), output: z.string().optional(), handler: () => undefined });
    expectTypeOf<JobOutput<typeof invoice, "invoice">>().toEqualTypeOf<{ at: string; total: string; lines: Array<{ sku: string; at: string }> }>();
    expectTypeOf<JobOutput<typeof receipt, "receipt">>().toEqualTypeOf<{ readonly id: string; readonly at: string }>();
    expectTypeOf<JobOutput<typeof failure, "failure">>().toEqualTypeOf<Record<string, unknown>>();
    expectTypeOf<JobOutput<typeof maybe, "maybe">>().toEqualTypeOf<string | null>();
    // As JSON brings them back.
    expect(JSON.parse(JSON.stringify(new Receipt("r", new Date(0))))).toEqual({ id: "r", at: "1970-01-01T00:00:00.000Z" });
    expect(JSON.parse(JSON.stringify(new Error("x")))).toEqual({});
  });

  it("an array's undefined or function element comes back null, as JSON writes it (an object's is left out)", () => {
    const holes = defineJob({
      name: "holes",
      schema: z.object({}),
      output: z.object({ tags: z.array(z.string().optional()), pair: z.tuple([z.number(), z.undefined()]), note: z.string().optional() }),
      handler: () => ({ tags: ["a", undefined], pair: [1, undefined] as [number, undefined] }),
    });
    expectTypeOf<JobOutput<typeof holes, "holes">>().toEqualTypeOf<{ tags: Array<string | null>; pair: [number, null]; note?: string | undefined }>();
    const back: JobOutput<typeof holes, "holes"> = JSON.parse(JSON.stringify({ tags: ["a", undefined], pair: [1, undefined], note: undefined }));
    expect(back).toEqual({ tags: ["a", null], pair: [1, null] });
  });

  it("an id whose job may be one without an output gives unknown, not the others' outputs", () => {
    expectTypeOf<JobOutput<typeof dated | typeof bare, "dated" | "bare">>().toBeUnknown();
    expectTypeOf<JobOutput<typeof bare, "bare">>().toBeUnknown();
  });

  it("a payload is never null, even for a nullable schema (the API refuses it)", () => {
    expectTypeOf<JobInput<typeof nullable, "nullable">>().toEqualTypeOf<{ a: number }>();
    expect(nullable.name).toBe("nullable");
  });

  it("nor undefined, for a schema that takes anything (z.unknown(), z.any()): enqueue refuses both at run time", () => {
    const anything = defineJob({ name: "anything", schema: z.unknown(), handler: () => {} });
    const loose = defineJob({ name: "loose", schema: z.any(), handler: () => {} });
    expectTypeOf<null>().not.toExtend<JobInput<typeof anything, "anything">>();
    expectTypeOf<undefined>().not.toExtend<JobInput<typeof loose, "loose">>();
    expectTypeOf<{ any: "object" }>().toExtend<JobInput<typeof anything, "anything">>();
    expectTypeOf<"text">().toExtend<JobInput<typeof loose, "loose">>();
  });
});

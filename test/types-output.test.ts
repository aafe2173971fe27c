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

  it("an id whose job may be one without an output gives unknown, not the others' outputs", () => {
    expectTypeOf<JobOutput<typeof dated | typeof bare, "dated" | "bare">>().toBeUnknown();
    expectTypeOf<JobOutput<typeof bare, "bare">>().toBeUnknown();
  });

  it("a payload is never null, even for a nullable schema (the API refuses it)", () => {
    expectTypeOf<JobInput<typeof nullable, "nullable">>().toEqualTypeOf<{ a: number }>();
    expect(nullable.name).toBe("nullable");
  });
});

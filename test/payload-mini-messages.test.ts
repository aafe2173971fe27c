// Payload issues of a zod/mini schema, in a process that loads neither full zod nor zod's English locale
// (as a Worker built with zod/mini does): zod/mini says each only as "Invalid input", pgtick says what it holds.
import { describe, expect, it } from "vitest";
import * as zm from "zod/mini";
import { defineJob, JobsError } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("payload_mini");
const caught = async (p: Promise<unknown>): Promise<JobsError> => {
  const e = await p.then(() => undefined, (x: unknown) => x);
  expect(e).toBeInstanceOf(JobsError);
  return e as JobsError;
};

describe("zod/mini issues", () => {
  it("say what each issue holds, where zod/mini says only \"Invalid input\"", async () => {
    const mini = defineJob({
      name: "mini",
      schema: zm.strictObject({ email: zm.email(), name: zm.string().check(zm.minLength(1)), n: zm.number().check(zm.maximum(5)), k: zm.enum(["a", "b"]), tags: zm.array(zm.string()).check(zm.maxLength(1)) }),
      handler: () => {},
    });
    const jobs = await h.isolated([mini]);
    const error = await caught(jobs.enqueueUnchecked([{ job: "mini", payload: { email: "x", name: "", n: 9, k: "c", tags: ["a", "b"], extra: 1 } }], { batch: false }));
    const said = (error.details as { issues: Array<{ path: string[]; message: string }> }).issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    expect(said.sort()).toEqual([
      ": Unrecognized key(s): extra",
      "email: Invalid email",
      'k: Invalid option: expected one of "a"|"b"',
      "n: Too big: expected number to be <=5",
      "name: Too small: expected string to have >=1 characters",
      "tags: Too big: expected array to have <=1 items",
    ]);
    const typed = await caught(jobs.enqueueUnchecked([{ job: "mini", payload: { email: 1 } }], { batch: false }));
    expect((typed.details as { issues: Array<{ message: string }> }).issues[0]!.message).toBe("Invalid input: expected string");
  });

});

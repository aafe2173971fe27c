// A tick killed outright (SIGKILL: no deadline, no requeue) leaves leases that
// expire; a later tick reclaims them. Nothing is lost, and a job that kills its
// tick every time ends as a dead letter instead of looping.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("kill");

it("reclaims the jobs of a tick killed with SIGKILL after their leases expire", async () => {
  const ran: string[] = [];
  const hang = defineJob({ name: "hang", schema: z.object({ label: z.string() }), handler: (p, ctx) => void ran.push(`${p.label} attempt ${ctx.attempt}`) });
  const jobs = await h.isolated([hang]);
  const { id: normal } = await jobs.enqueue("hang", { label: "normal" }, { maxAttempts: 3 });
  const { id: poison } = await jobs.enqueue("hang", { label: "poison" }, { maxAttempts: 1 });

  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("./support/tick-child.ts", import.meta.url)), h.url, jobs.settings.tablePrefix], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  await expect.poll(() => out.split("\n").filter((l) => l.startsWith("started")).length, { timeout: 20_000 }).toBe(2);
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  child.kill("SIGKILL");
  expect(await exited).toBe("SIGKILL");

  // Both are still marked running under the dead tick's lease.
  const held = await h.rows<{ status: string; attempt: number }>(`SELECT status, attempt FROM ${jobs.tables.queue} ORDER BY attempt`);
  expect(held).toEqual([{ status: "running", attempt: 1 }, { status: "running", attempt: 1 }]);
  // Before the lease expires, another tick leaves them alone.
  expect(await jobs.tick({ budgetMs: 2_000 })).toMatchObject({ claimed: 0, reclaimed: 0 });

  await expect
    .poll(async () => (await h.rows<{ expired: boolean }>(`SELECT bool_and(lease_expires_at < now()) AS expired FROM ${jobs.tables.queue}`))[0]!.expired, {
      timeout: 20_000,
      interval: 200,
    })
    .toBe(true);
  const report = await jobs.tick({ budgetMs: 10_000 });
  expect(report).toMatchObject({ reclaimed: 2, claimed: 1, succeeded: 1, deadLettered: 1 });
  // The killed run counted as an attempt: the normal job ran again as attempt 2, the poison pill is dead.
  expect(ran).toEqual(["normal attempt 2"]);
  expect(await h.rows(`SELECT id FROM ${jobs.tables.queue}`)).toEqual([]);
  const dead = await h.rows(`SELECT id, reason, attempts FROM ${jobs.tables.deadLetters}`);
  expect(dead).toEqual([{ id: poison, reason: "lease_expired", attempts: 1 }]);
  expect(jobs.logs.find((e) => e.msg === "expired lease reclaimed")).toMatchObject({ jobId: normal, jobName: "hang", outcome: "reclaimed" });
}, 60_000);

import type { Db } from "../db.js";
import type { ClaimedRow } from "../store/tick/claim.js";
import { runStep, type StepInput, type StepResult } from "../store/tick/step.js";
import { type SlotStep, type TickRow, unreserveSlot } from "../store/tick/slot.js";
import { type Carried, Carry, carriedBy, writes } from "./carry.js";
import { ClaimPacing } from "./claim-pacing.js";
import { DispatchHint } from "./dispatch-hint.js";
import { tickClock } from "./clock.js";
import { FanOutPacer, SPAWN_ANSWER_MS } from "./fan-out.js";
import { abandonRuns, finalInput } from "./final.js";
import { afterProbes } from "./extensions.js";
import { FlowClaims } from "./flow-claims.js";
import { tickLimits } from "./limits.js";
import { registerLiveTick, wakeable } from "./live.js";
import { pipelineMinFor, planStatement, settleDueAt } from "./pump-plan.js";
import { LostClaims } from "./lost-claims.js";
import { logStep } from "./results-log.js";
import { lateSettler } from "./late.js";
import type { TickWatch } from "../observe/watch.js";
import { Run } from "./run.js";
import { retriesWritten, type Settlement, settledLate, settlementOf } from "./settlement.js";
import { settle } from "./settler.js";
import { firstStatement, refusedByServer, StatementFailures } from "./statement-failures.js";
import type { TickEnv, TickOptions, TickReport } from "./types.js";

/** Reclaimed at most per statement; when a tick that found every slot taken tries again for one, for what it enqueued itself. */
const [RECLAIM_LIMIT, TAKE_AGAIN_MS] = [1_000, [100, 400, 1_000]] as const;

/**
 * One invocation of the dispatcher: the loop only orchestrates. It takes a tick
 * slot and claims up to its free concurrency, starts runs (the executor), hands
 * finished ones to the settler with the next claim, keeps up to two statements
 * in flight, asks for more ticks when more is due, and at the deadline requeues
 * what still runs and frees (or hands on) its slot. Every write after a claim
 * is fenced on the claim's lease token; every statement is bounded by the time
 * left plus the grace.
 */
export const runTick = (env: TickEnv, options: TickOptions = {}): Promise<TickReport> =>
  env.observer?.observe({ queue: env.tables.prefix, budgetMs: tickLimits(env.settings, options).budgetMs, handoff: options.handoff !== undefined }, (w) => tickLoop(env, options, w)) ?? tickLoop(env, options, undefined);

const tickLoop = async (env: TickEnv, options: TickOptions, watch: TickWatch | undefined): Promise<TickReport> => {
  const { db, tables, registry, settings, logger } = env;
  const random = env.random ?? Math.random;
  const limits = tickLimits(settings, options, db.statementsAtOnce, db.maxResultBytes);
  const { budgetMs, concurrency, batchSize } = limits;
  let maxInFlight = limits.inFlight;
  const { started, deadline, cutoff, leaseMs, bound, lateBound } = tickClock(limits, settings);
  // A second statement goes out while one is in flight only for a worthwhile batch (see pump-plan.ts).
  const pipelineMin = pipelineMinFor(concurrency, env.flow?.enabled ?? false);
  const [settleBatch, tickOwner] = [4 * concurrency, crypto.randomUUID()];
  const flow = new FlowClaims(env.flow);
  const fanOut = new FanOutPacer(options.spawn, settings.maxTicks, concurrency, logger, async (h) => (await unreserveSlot(db, tables, h, { timeoutMs: bound(true) })).rows.length > 0);
  // History on: every statement that ends runs records them, and runs keep their ctx.log lines.
  const history = settings.historyRetentionMs !== false;
  const maxOutputBytes = history ? settings.maxOutputBytes : undefined;

  const runs = new Map<string, Run>();
  // Runs past their own timeout whose handler has not returned: each keeps its slot, and its job stays
  // running (counted by its limits, no retry beside it), until the handler returns or the tick ends.
  const overdue = new Map<Run, Settlement>();
  let pending: Settlement[] = [];
  // When the oldest settlement still owed finished.
  let pendingSince = 0;
  // Slots being claimed, statements out, those of them that settle and claim nothing, and statements sent.
  let [claiming, inflight, settling, statements] = [0, 0, 0, 0];
  let [slot, heldSlot, tickRow, capped]: [{ slot: number; owner: string } | undefined, number | null, TickRow | null, boolean] = [undefined, null, null, false];
  const carry = new Carry();
  const pacing = new ClaimPacing(settings.claimIntervalMs);
  const hint = new DispatchHint();
  let [stopped, finishing] = [false, false];
  const failures = new StatementFailures();
  const lost = new LostClaims();
  // A fault in taking in a statement's result: the tick stops at once. Unstarted: its first statement never got through.
  let [broken, unstarted]: Array<{ error: unknown } | undefined> = [];
  let [requeuedIds, lateCount]: [string[], number] = [[], 0];
  let [queue, cleaned]: [TickReport["queue"], TickReport["cleaned"]] = [null, null];
  const lateClaims: Run[] = [];

  const { signalWake, sleep, nap } = wakeable();
  const stop = () => {
    stopped = true;
    signalWake();
  };
  const timer = setTimeout(stop, budgetMs);
  options.signal?.addEventListener("abort", stop, { once: true });
  if (options.signal?.aborted) stopped = true;
  const free = () => concurrency - runs.size - overdue.size - claiming;
  const unregister = registerLiveTick(tables.prefix, () => {
    if (!slot || stopped || Date.now() >= cutoff) return false;
    pacing.woken();
    signalWake();
    return free() > 0;
  });

  const send = (input: StepInput) => (statements++, runStep(db, tables, { ...input, history }, { timeoutMs: bound(input.slot?.mode === "release") }));
  // What extensions (schedules) send is bounded and counted like the tick's own statements.
  const boundedDb: Db = { query: (text, params, opts) => (statements++, db.query(text, params, { ...opts, timeoutMs: opts?.timeoutMs ?? bound(false) })) };
  const late = lateSettler((input, timeoutMs) => runStep(db, tables, { ...input, history }, { timeoutMs }), lateBound, logger);

  const start = (row: ClaimedRow, owner: string) => {
    const run = new Run(row, owner, history);
    // A claim that comes back after the deadline (a statement held up) or once the tick stopped is not
    // started: it goes back with its attempt.
    if (finishing || stopped || Date.now() >= deadline) return void lateClaims.push(run);
    runs.set(row.id, run);
    watch?.start(run);
    const job = registry.get(row.job_name);
    void run.execute(job, logger, env.handlerDb ?? db).then((outcome) => {
      const s = settlementOf(run, job, outcome, random, maxOutputBytes);
      if (s.kind === "retry" && s.item.returned) pacing.refused();
      if (run.abandoned) return void late.settle(s);
      runs.delete(row.id);
      const { released } = run;
      if (outcome.kind === "failed" && outcome.timedOut && released) {
        overdue.set(run, s);
        // Unless the tick's end settled it already.
        void released.then(() => overdue.delete(run) && owe(settledLate(s)));
        return;
      }
      owe(s);
    });
  };
  const owe = (s: Settlement) => {
    if (pending.length === 0) pendingSince = Date.now();
    pending.push(s);
    signalWake();
  };

  /** Takes in what a statement did: logs per job, the slot, the runs it claimed, the ticks it asked for. */
  const absorb = (input: StepInput, settlements: readonly Settlement[], requeue: readonly Run[], result: StepResult, taken?: Carried) => {
    logStep(logger, settlements, requeue, result, input.cutShort);
    watch?.applied(settlements, requeue, result);
    if (result.tick) {
      tickRow = result.tick;
      if (input.slot?.mode === "take") (slot = { slot: result.tick.slot, owner: tickOwner }), (heldSlot = result.tick.slot);
    } else {
      carry.addCounts(result.counts, taken);
      if (input.slot?.mode === "hold" && input.slot.write !== false && slot) {
        logger.log("warn", "tick slot lost: its lease expired and another tick took it; this tick claims no more", { slot: slot.slot });
        slot = undefined;
      }
    }
    carry.addMetrics(result.metered);
    if (input.slot?.mode === "take") capped = !result.slotFree;
    // Tables behind this code: it took no slot and claimed nothing (thrown here, the tick ends with the error).
    if (env.schema && result.schemaAt !== null && result.schemaAt < env.schema.needs) throw env.schema.behind(result.schemaAt);
    const want = input.claim?.limit ?? 0;
    if (want > 0) pacing.claimed(want, result, Date.now());
    if (result.unclaimed.length > 0) pacing.woken(); // Jobs given back are due again, whatever this claim found.
    if (settlements.length > 0) pacing.runsEnded(Date.now(), runs.size + overdue.size);
    // Soon (within the claim interval), or while other runs keep the tick going anyway; never a retry of a job it has no handler for.
    const soon = Date.now() + settings.claimIntervalMs;
    const retries = retriesWritten(settlements, result, Date.now(), (name) => registry.get(name) !== undefined);
    pacing.retriesDue(retries.filter((at) => at < cutoff && (runs.size > 0 || at <= soon)));
    flow.saw(result);
    hint.saw(result);
    for (const row of result.claimed) start(row, input.claim!.owner);
    fanOut.spawn(result.spawn);
  };

  const step = async (plain: StepInput, settlements: Settlement[], requeue: readonly Run[] = []): Promise<StepResult | undefined> => {
    inflight++;
    const want = plain.claim?.limit ?? 0;
    const settleOnly = want === 0 && settlements.length > 0;
    if (settleOnly) settling++;
    claiming += want;
    const taken = writes(plain) ? carry.take() : undefined;
    const input = lost.attach(taken ? carriedBy(plain, taken) : plain, slot?.slot);
    // The statement sent last: the one that failed, if one did (a step may go out in parts; see settler.ts).
    let [result, refused, sent]: [StepResult | undefined, boolean, StepInput | undefined] = [undefined, false, undefined];
    try {
      result = await settle((part) => send((sent = part)), input, settlements, logger);
      failures.succeeded();
      lost.succeeded(input, result, logger);
    } catch (error) {
      // Atomic: one the server refused did nothing, so its settlements and what it carried are still owed. One whose answer
      // was lost may have committed: its settlements go again (their fences refuse a repeat), what it carried does not.
      pending = [...settlements, ...pending];
      refused = refusedByServer(error);
      if (sent) lost.failed(sent, error);
      const retryInMs = failures.failed(error, Date.now());
      // Failed beside another statement (a second connection refused at a connection limit, say): one at a time from now on.
      if (inflight > 1) maxInFlight = 1;
      if (failures.fatal) stopped = true;
      failures.say(logger, error, retryInMs, { runs: runs.size, maxInFlight });
    } finally {
      claiming -= want;
      if (taken) carry.written(taken, result === undefined && refused);
      inflight--;
      if (settleOnly) settling--;
      signalWake();
    }
    try {
      // Outside the statement's catch: what the statement did happened, whatever taking it in throws.
      if (result) absorb(input, settlements, requeue, result, taken);
    } catch (error) {
      broken ??= { error };
      stopped = true;
    }
    return result;
  };

  const claimInput = (limit: number, slotStep: SlotStep): StepInput =>
    ({ claim: { limit, owner: crypto.randomUUID(), leaseMs: leaseMs(), flow: flow.claim(limit), after: hint.next(Date.now()) }, slot: slotStep, fanOut: fanOut.input(limit, free()) });
  const take = (): SlotStep => ({ mode: "take", maxTicks: settings.maxTicks, owner: tickOwner, leaseMs: leaseMs(), budgetMs, handoff: options.handoff, needs: env.schema?.needs });
  /**
   * Claims what this tick's extensions enqueued (a schedule's occurrences) while it holds no slot. When every
   * slot is taken it tries again a few times within about a second: the ticks holding them may have claimed
   * before those jobs existed and be finishing, and the next tick may be a minute away.
   */
  const claimEnqueued = async () => {
    for (const wait of capped ? TAKE_AGAIN_MS : [0, ...TAKE_AGAIN_MS]) {
      if (slot || stopped || Date.now() + wait >= cutoff) return;
      if (wait > 0) await nap(wait);
      if (stopped) return;
      await step(claimInput(batchSize, take()), []);
      if (!capped) return;
    }
  };

  /** Sends what is owed and what free slots allow, up to `maxInFlight` statements. */
  const pump = () => {
    while (inflight < maxInFlight && !stopped) {
      const now = Date.now();
      if (failures.waitUntil(now) !== undefined) return;
      const room = free();
      const due = pacing.due(now, runs.size);
      const want = slot && now < cutoff && room > 0 && due ? Math.min(batchSize, room) : 0;
      const plan = planStatement({ pending: pending.length, pendingSince, settling, inflight, maxInFlight, want, claiming, now, pipelineMin, settleBatch });
      if (!plan) return;
      const settlements = plan.settle ? pending : [];
      if (plan.settle) pending = [];
      // One statement at a time writes the hot rows (the slot row, the metrics), about once a second.
      const write = carry.writeDue(now);
      const hold: SlotStep | undefined = slot ? { mode: "hold", slot: slot.slot, owner: slot.owner, leaseMs: leaseMs(), write } : undefined;
      const meter = write ? undefined : { later: true };
      void step(plan.claim > 0 ? { ...claimInput(plan.claim, hold!), meter } : { slot: hold, meter }, settlements);
    }
  };
  /** Nothing out, owed, running or overdue, and nothing more to claim before the cutoff. */
  const done = () =>
    inflight === 0 && pending.length === 0 && runs.size === 0 && overdue.size === 0 && (!slot || Date.now() >= cutoff || pacing.doneBy(cutoff));

  try {
    // A caller's signal aborted before the start is a deadline already past: nothing is claimed.
    const first = stopped ? undefined : await firstStatement(() => step({
      ...claimInput(batchSize, take()),
      markTick: true,
      reclaim: { limit: RECLAIM_LIMIT },
      probe: (env.extensions ?? []).flatMap((e) => e.probe(tables)),
    }, []), failures, () => !stopped && Date.now() < cutoff, nap);
    unstarted = first ? undefined : failures.last;
    queue = first?.queueMinute ?? null;
    if (first && (await afterProbes(env, first.probe, boundedDb)) > 0) {
      pacing.woken();
      await claimEnqueued();
    }
    while (!stopped && Date.now() < deadline) {
      pump();
      if (done()) break;
      // Claim again later: while runs go on with free slots (work enqueued elsewhere), or when held-back jobs may go;
      // and settle a held batch of settlements when it has waited long enough.
      const claimAt = !slot || free() === 0 || inflight > 0 ? undefined : pacing.nextAt(runs.size);
      const settleAt = settleDueAt({ pending: pending.length, pendingSince, settling, inflight, maxInFlight, pipelineMin });
      // After a failed statement, nothing goes out before its pause ends.
      const wakeAt = failures.waitUntil(Date.now()) ?? Math.min(claimAt === undefined ? Infinity : Math.min(claimAt, cutoff), settleAt ?? Infinity);
      await nap(wakeAt === Infinity ? undefined : wakeAt - Date.now());
      // Let runs that finished together settle in one statement.
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", stop);
    unregister();
  }

  // The end: statements still out are bounded; what they claim now is requeued, not started.
  finishing = stopped = true;
  while (inflight > 0) await sleep();
  const requeue = [...runs.values()];
  const cutShort = broken ? "failed" : options.signal?.aborted ? "stopped" : "deadline";
  abandonRuns(requeue, logger, cutShort);
  // Overdue runs' attempts are settled as they ended (at their timeout); their handlers may still run.
  pending = [...pending, ...[...overdue.values()].map(settledLate)];
  overdue.clear();
  let settledByFinal = new Map<string, string>();
  try {
    // Owed only what lost answers took: one try, before the deadline (the database may be out of reach).
    const owedOnly = !(slot || pending.length > 0 || requeue.length > 0 || lateClaims.length > 0 || carry.hasMetrics || flow.resumeAt !== undefined);
    if (!owedOnly || (lost.owed && Date.now() < deadline)) {
      const handOn = fanOut.enabled && !failures.last && !broken && !options.signal?.aborted && pacing.handOn(Date.now(), budgetMs - limits.claimCutoffMs);
      const final = finalInput(requeue, lateClaims, slot, handOn, settings, flow.resumeAt, cutShort, carry.total(tickRow).claimed);
      let result: StepResult | undefined;
      // Failed, it is sent again after its pause while the grace lasts: it carries what the runs owe (once, after a failure no retry mends).
      for (let at = 0; !result && (at === 0 || at < (owedOnly || failures.fatal ? 0 : deadline + limits.graceMs)); at = failures.waitUntil(Date.now()) ?? Date.now()) {
        if (at > Date.now()) await nap(at - Date.now());
        else result = await step(final, pending.splice(0), [...requeue, ...lateClaims]);
      }
      settledByFinal = new Map([...(result?.requeued ?? []).map((id) => [id, "requeued"] as const), ...(result?.requeueExhausted ?? []).map((id) => [id, "dead-lettered"] as const)]);
      // Claims that came back too late to start were no runs: returned, not requeued.
      requeuedIds = (result?.requeued ?? []).filter((id) => !lateClaims.some((r) => r.row.id === id));
      lateCount = (result?.requeued.length ?? 0) - requeuedIds.length;
      if (result?.housekeeping?.ran) cleaned = result.housekeeping;
      if (result?.tick?.reserved && result.tick.owner) fanOut.spawn([{ slot: result.tick.slot, token: result.tick.owner }]);
    }
    await fanOut.answered(SPAWN_ANSWER_MS);
  } finally {
    late.finalWritten(settledByFinal);
  }
  const report: TickReport = {
    ...carry.total(tickRow), startedAt: new Date(started).toISOString(), durationMs: Date.now() - started,
    requeuedIds, unstarted: lateCount, statements, slot: heldSlot, capped, spawned: fanOut.spawned, queue, cleaned,
  };
  const failure = broken ?? failures.last ?? unstarted;
  logger.log(failure ? "warn" : heldSlot !== null || report.reclaimed > 0 ? "info" : "debug", failure ? "tick ended on a failed statement" : "tick finished", { ...report, requeuedIds: undefined });
  watch?.end(report, failure?.error);
  if (failure) throw failure.error;
  return report;
};

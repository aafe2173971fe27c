/**
 * The ticks running in this isolate, by table prefix, so a kick (an enqueue of
 * a job due now) can wake one that has free slots instead of starting another.
 */
const live = new Map<string, Set<() => boolean>>();

/** Registers a running tick's wake-up; returns the unregister function. */
export const registerLiveTick = (prefix: string, wake: () => boolean): (() => void) => {
  let set = live.get(prefix);
  if (!set) live.set(prefix, (set = new Set()));
  set.add(wake);
  return () => {
    set.delete(wake);
    if (set.size === 0) live.delete(prefix);
  };
};

/** Wakes every running tick of this queue; true when one of them can claim now (it holds a slot with free room). */
export const wakeLiveTicks = (prefix: string): boolean => {
  let taken = false;
  for (const wake of live.get(prefix) ?? []) taken = wake() || taken;
  return taken;
};

/** A loop's sleep and the wake-up that ends it (a wake-up with no one asleep is not kept). */
export const wakeable = () => {
  let wake: (() => void) | undefined;
  const signalWake = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const sleep = () => new Promise<void>((resolve) => (wake = resolve));
  /** Sleeps until woken, or at most `ms`. */
  const nap = async (ms?: number) => {
    const timer = ms === undefined ? undefined : setTimeout(signalWake, Math.max(0, ms));
    await sleep();
    clearTimeout(timer);
  };
  return { signalWake, sleep, nap };
};

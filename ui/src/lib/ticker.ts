// Clocks that rest while no one can read them: a countdown or a "seen 5 s ago" needs a tick
// only while someone can read it, and only when its text would change. Hidden, the timer is
// stopped (no work at all); shown again, the clock ticks at once and then keeps its pace. A
// clock whose texts will not change again (nothing counting down) sets no timer at all, so an
// idle window wakes for nothing.

/** Whether the page can be seen, and a way to hear when that changes. */
export interface Visibility {
  hidden(): boolean;
  /** Calls `listener` on every change; returns the way to stop listening. */
  onChange(listener: () => void): () => void;
}

/** The timer functions a ticker uses (the global ones by default). */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The page's own visibility (`document.visibilityState`). */
export function pageVisibility(): Visibility {
  return {
    hidden: () => document.visibilityState === "hidden",
    onChange(listener) {
      document.addEventListener("visibilitychange", listener);
      return () => document.removeEventListener("visibilitychange", listener);
    },
  };
}

const globalTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Calls `tick` every `ms` while the page is visible, and once more as soon as it is shown
 * again. Returns the way to stop for good.
 */
export function tickWhileVisible(
  ms: number,
  tick: () => void,
  visibility: Visibility = pageVisibility(),
  timers: Timers = globalTimers,
): () => void {
  return tickWhenDue(() => ms, tick, visibility, timers);
}

/**
 * Calls `tick` when `dueIn()` says (in ms from now, asked again after each tick; `undefined`:
 * nothing will change, so no timer until the page is shown again) while the page is visible,
 * and once more as soon as it is shown again. Returns the way to stop for good.
 */
export function tickWhenDue(
  dueIn: () => number | undefined,
  tick: () => void,
  visibility: Visibility = pageVisibility(),
  timers: Timers = globalTimers,
): () => void {
  let handle: unknown;
  const schedule = () => {
    const ms = dueIn();
    if (ms === undefined) return;
    handle = timers.setTimeout(() => {
      handle = undefined;
      tick();
      schedule();
    }, Math.max(0, ms));
  };
  const pause = () => {
    if (handle !== undefined) timers.clearTimeout(handle);
    handle = undefined;
  };
  const follow = () => {
    pause();
    if (visibility.hidden()) return;
    tick();
    schedule();
  };
  if (!visibility.hidden()) schedule();
  const stopListening = visibility.onChange(follow);
  return () => {
    pause();
    stopListening();
  };
}

/**
 * The clock of texts written of `shown` times (RFC 3339, one space between each: a string, so a
 * Svelte effect runs again only when the times change): calls `tick` with the time now at once,
 * then whenever `changesIn` says a text of them next reads otherwise, while the page is visible.
 * Returns the way to stop for good.
 */
export function tickForTimes(
  shown: string,
  changesIn: (times: readonly string[], nowMs: number) => number | undefined,
  tick: (nowMs: number) => void,
  visibility: Visibility = pageVisibility(),
  timers: Timers = globalTimers,
): () => void {
  const times = shown ? shown.split(" ") : [];
  tick(Date.now());
  return tickWhenDue(() => changesIn(times, Date.now()), () => tick(Date.now()), visibility, timers);
}

// Clocks that rest while the window is hidden: a countdown or a "seen 5 s ago" needs a tick
// each second only while someone can read it. Hidden, the timer is stopped (no work at all);
// shown again, the clock ticks at once and then keeps its pace.

/** Whether the page can be seen, and a way to hear when that changes. */
export interface Visibility {
  hidden(): boolean;
  /** Calls `listener` on every change; returns the way to stop listening. */
  onChange(listener: () => void): () => void;
}

/** The timer functions a ticker uses (the global ones by default). */
export interface Timers {
  setInterval(callback: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
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
  setInterval: (callback, ms) => setInterval(callback, ms),
  clearInterval: (handle) => clearInterval(handle as ReturnType<typeof setInterval>),
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
  let handle: unknown;
  const start = () => {
    if (handle === undefined) handle = timers.setInterval(tick, ms);
  };
  const pause = () => {
    if (handle !== undefined) timers.clearInterval(handle);
    handle = undefined;
  };
  const follow = () => {
    if (visibility.hidden()) pause();
    else {
      tick();
      start();
    }
  };
  if (!visibility.hidden()) start();
  const stopListening = visibility.onChange(follow);
  return () => {
    pause();
    stopListening();
  };
}

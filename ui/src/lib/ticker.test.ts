import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { tickForTimes, tickWhenDue, tickWhileVisible, type Visibility } from "./ticker";

function fakeVisibility(hidden: boolean): Visibility & { set(hidden: boolean): void; listeners: number } {
  let current = hidden;
  const listeners = new Set<() => void>();
  return {
    hidden: () => current,
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    set(next) {
      current = next;
      listeners.forEach((listener) => listener());
    },
    get listeners() {
      return listeners.size;
    },
  };
}

describe("a clock that rests while the window is hidden", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("ticks every second while visible, not at all while hidden, and at once when shown", () => {
    const visibility = fakeVisibility(false);
    const tick = vi.fn();
    const stop = tickWhileVisible(1000, tick, visibility);
    vi.advanceTimersByTime(3000);
    expect(tick).toHaveBeenCalledTimes(3);

    visibility.set(true);
    vi.advanceTimersByTime(60_000);
    expect(tick).toHaveBeenCalledTimes(3);
    expect(vi.getTimerCount()).toBe(0);

    visibility.set(false);
    expect(tick).toHaveBeenCalledTimes(4);
    vi.advanceTimersByTime(1000);
    expect(tick).toHaveBeenCalledTimes(5);

    stop();
    vi.advanceTimersByTime(5000);
    expect(tick).toHaveBeenCalledTimes(5);
    expect(visibility.listeners).toBe(0);
  });

  it("starts resting when the window is hidden from the start", () => {
    const visibility = fakeVisibility(true);
    const tick = vi.fn();
    tickWhileVisible(1000, tick, visibility);
    vi.advanceTimersByTime(10_000);
    expect(tick).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("a clock that ticks only when its text would change", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("waits as long as the next change needs, and sets no timer once nothing will change", () => {
    const visibility = fakeVisibility(false);
    const waits: (number | undefined)[] = [400, 60_000, undefined];
    const tick = vi.fn();
    const stop = tickWhenDue(() => waits.shift(), tick, visibility);
    vi.advanceTimersByTime(399);
    expect(tick).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(tick).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(59_999);
    expect(tick).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    expect(tick).toHaveBeenCalledTimes(2);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(3_600_000);
    expect(tick).toHaveBeenCalledTimes(2);
    stop();
    expect(visibility.listeners).toBe(0);
  });

  it("sets no timer at all when nothing counts down, and still ticks once when shown again", () => {
    const visibility = fakeVisibility(false);
    const tick = vi.fn();
    tickWhenDue(() => undefined, tick, visibility);
    expect(vi.getTimerCount()).toBe(0);
    visibility.set(true);
    visibility.set(false);
    expect(tick).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("a clock of the times on screen", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("ticks at once, asks about exactly the times shown, and sets no timer for none", () => {
    vi.setSystemTime(Date.parse("2026-12-03T10:00:00.000Z"));
    const asked: (readonly string[])[] = [];
    const changesIn = (times: readonly string[]) => {
      asked.push(times);
      return times.length > 0 ? 500 : undefined;
    };
    const ticks: number[] = [];
    const stop = tickForTimes("2026-12-03T11:00:00Z 2026-12-03T09:00:00Z", changesIn, (at) => ticks.push(at), fakeVisibility(false));
    expect(ticks).toEqual([Date.parse("2026-12-03T10:00:00.000Z")]);
    expect(asked[0]).toEqual(["2026-12-03T11:00:00Z", "2026-12-03T09:00:00Z"]);
    vi.advanceTimersByTime(1000);
    expect(ticks).toHaveLength(3);
    stop();

    const none: number[] = [];
    tickForTimes("", changesIn, (at) => none.push(at), fakeVisibility(false));
    expect(asked.at(-1)).toEqual([]);
    expect(none).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });
});

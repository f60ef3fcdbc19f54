import { describe, expect, it } from "vitest";
import { scrollToRow, visibleWindow } from "./virtual";

describe("the list window", () => {
  it("renders only the rows in view plus the overscan, and keeps the full height", () => {
    const window = visibleWindow({ scrollTop: 3600, height: 600 }, 5000, 36, 8);
    expect(window.start).toBe(92);
    expect(window.end).toBe(100 + 18 + 8);
    expect(window.before + (window.end - window.start) * 36 + window.after).toBe(5000 * 36);
  });

  it("clamps at both ends and copes with an empty list", () => {
    expect(visibleWindow({ scrollTop: 0, height: 600 }, 5000, 36).start).toBe(0);
    const last = visibleWindow({ scrollTop: 5000 * 36, height: 600 }, 5000, 36);
    expect(last.end).toBe(5000);
    expect(last.after).toBe(0);
    expect(visibleWindow({ scrollTop: 0, height: 600 }, 0, 36)).toEqual({ start: 0, end: 0, before: 0, after: 0 });
  });

  it("scrolls just enough to show a row above or below the view", () => {
    expect(scrollToRow(2, { scrollTop: 360, height: 360 }, 36)).toBe(72);
    expect(scrollToRow(30, { scrollTop: 0, height: 360 }, 36)).toBe(31 * 36 - 360);
    expect(scrollToRow(5, { scrollTop: 0, height: 360 }, 36)).toBe(0);
  });
});

import { describe, expect, it } from "vitest";
import { wrapTarget } from "./focus";

describe("wrapTarget", () => {
  it("wraps Tab from the last element to the first, and Shift+Tab from the first to the last", () => {
    expect(wrapTarget(3, 2, false)).toBe(0);
    expect(wrapTarget(3, 0, true)).toBe(2);
  });
  it("leaves the moves inside the dialog to the browser", () => {
    expect(wrapTarget(3, 0, false)).toBeNull();
    expect(wrapTarget(3, 2, true)).toBeNull();
  });
  it("brings a focus that is outside the dialog back in", () => {
    expect(wrapTarget(3, -1, false)).toBe(0);
    expect(wrapTarget(3, -1, true)).toBe(2);
    expect(wrapTarget(0, -1, false)).toBeNull();
  });
});

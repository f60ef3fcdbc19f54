import { describe, expect, it } from "vitest";
import { initialFocus, nextTabIndex } from "./focus";

describe("nextTabIndex", () => {
  it("moves forward and wraps from the last to the first", () => {
    expect(nextTabIndex(0, 3, false)).toBe(1);
    expect(nextTabIndex(2, 3, false)).toBe(0);
  });
  it("moves backward and wraps from the first to the last", () => {
    expect(nextTabIndex(1, 3, true)).toBe(0);
    expect(nextTabIndex(0, 3, true)).toBe(2);
  });
  it("enters at an end when the focus is outside", () => {
    expect(nextTabIndex(-1, 3, false)).toBe(0);
    expect(nextTabIndex(-1, 3, true)).toBe(2);
  });
  it("answers -1 with nothing to reach", () => {
    expect(nextTabIndex(-1, 0, false)).toBe(-1);
  });
});

describe("initialFocus", () => {
  const items = [
    { name: "close", field: false, marked: false },
    { name: "name", field: true, marked: false },
    { name: "save", field: false, marked: true },
  ];
  const marked = (item: (typeof items)[number]) => item.marked;
  const field = (item: (typeof items)[number]) => item.field;
  it("prefers the marked element", () => {
    expect(initialFocus(items, marked, field)?.name).toBe("save");
  });
  it("then the first field, then the first element", () => {
    expect(initialFocus(items.slice(0, 2), marked, field)?.name).toBe("name");
    expect(initialFocus(items.slice(0, 1), marked, field)?.name).toBe("close");
    expect(initialFocus([], marked, field)).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { differences, shown } from "./diff";

describe("the conflict diff", () => {
  it("names every differing leaf by its path, with both sides", () => {
    const local = { description: "edited here", contracts: [{ name: "web", state: "requested" }] };
    const record = { description: "edited in the repo", contracts: [{ name: "web", state: "staged" }, { name: "db", state: "staged" }] };
    expect(differences(local, record)).toEqual([
      { path: "description", local: "edited here", record: "edited in the repo" },
      { path: "contracts[0].state", local: "requested", record: "staged" },
      { path: "contracts[1]", local: undefined, record: { name: "db", state: "staged" } },
    ]);
  });

  it("finds nothing between equal documents, and shows a missing side as missing", () => {
    expect(differences({ a: [1, { b: null }] }, { a: [1, { b: null }] })).toEqual([]);
    expect(differences({ a: 1 }, {})).toEqual([{ path: "a", local: 1, record: undefined }]);
    expect(shown(undefined)).toBe("missing");
    expect(shown({ b: 1 })).toBe('{"b":1}');
  });
});

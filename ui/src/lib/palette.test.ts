import { describe, expect, it } from "vitest";
import { rank, score, step } from "./palette";

const items = [
  { id: "new", label: "New deployment" },
  { id: "go-activity", label: "Go to Activity" },
  { id: "open-web", label: "Open deployment web" },
  { id: "open-webhooks", label: "Open deployment webhooks" },
  { id: "open-api", label: "Open deployment api" },
];

describe("the command palette", () => {
  it("matches words in order, each anywhere after the previous", () => {
    expect(rank(items, "open web").map((item) => item.id)).toEqual(["open-web", "open-webhooks"]);
    expect(rank(items, "dep api").map((item) => item.id)).toEqual(["open-api"]);
    expect(score("Open deployment web", "web open")).toBeUndefined();
  });

  it("ranks a word start above a match inside a word, and the shorter label first", () => {
    expect(rank(items, "act")[0]?.id).toBe("go-activity");
    expect(rank(items, "web").map((item) => item.id)).toEqual(["open-web", "open-webhooks"]);
  });

  it("shows everything, in order, for an empty query", () => {
    expect(rank(items, "  ").map((item) => item.id)).toEqual(items.map((item) => item.id));
  });

  it("moves the highlight with wrap-around", () => {
    expect(step(0, -1, 5)).toBe(4);
    expect(step(4, 1, 5)).toBe(0);
    expect(step(0, 1, 0)).toBe(0);
  });
});

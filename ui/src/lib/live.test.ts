import { describe, expect, it } from "vitest";
import { liveLabel, liveSentence } from "./live";

describe("sync status in words", () => {
  it("says live, connecting or polling, and why it polls", () => {
    expect(liveLabel({ mode: "live", why: null })).toBe("live");
    expect(liveLabel({ mode: "connecting", why: null })).toBe("connecting…");
    expect(liveLabel({ mode: "polling", why: "the server closed the stream" })).toBe("polling");
    expect(liveSentence({ mode: "polling", why: "the server closed the stream" })).toBe(
      "Polling every 30 s: the server closed the stream.",
    );
    expect(liveSentence({ mode: "live", why: null })).toContain("within a second");
  });

  it("says nothing beside the account before the status is read", () => {
    expect(liveLabel(null)).toBe("");
    expect(liveSentence(null)).toBe("Not following your repo yet.");
  });
});

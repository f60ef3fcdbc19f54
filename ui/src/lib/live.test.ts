import { describe, expect, it } from "vitest";
import { liveLabel, liveSentence, liveSourceLine } from "./live";

describe("sync status in words", () => {
  it("says live, connecting or polling, and why it polls", () => {
    expect(liveLabel({ mode: "live", why: null, source: null })).toBe("live");
    expect(liveLabel({ mode: "connecting", why: null, source: null })).toBe("connecting…");
    expect(liveLabel({ mode: "polling", why: "the server closed the stream", source: null })).toBe("polling");
    expect(liveSentence({ mode: "polling", why: "the server closed the stream", source: null })).toBe(
      "Polling every 30 s: the server closed the stream.",
    );
    expect(liveSentence({ mode: "live", why: null, source: null })).toContain("within a second");
  });

  it("names the stream followed: the PDS, or the relay Settings names", () => {
    expect(liveSourceLine({ mode: "live", why: null, source: null })).toBe("Following your PDS");
    expect(liveSourceLine({ mode: "live", why: null, source: "wss://relay.example.com/" })).toBe(
      "Following wss://relay.example.com/ (set in Settings)",
    );
  });

  it("says nothing beside the account before the status is read", () => {
    expect(liveLabel(null)).toBe("");
    expect(liveSentence(null)).toBe("Not following your repo yet.");
  });
});

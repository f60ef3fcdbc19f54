import { describe, expect, it } from "vitest";
import { guestLines, parseContracts, receivers, removeConfirmation, type Secret } from "./secrets";

const now = Date.parse("2026-12-05T10:00:00Z");

function secret(guests: Secret["guests"], contracts: string[] = []): Secret {
  return { name: "db-password", version: 2, contracts, guests };
}

describe("a secret's guests", () => {
  it("shows the key and when it was delivered once the current version is there", () => {
    const lines = guestLines(
      secret([{ contract: "api", guestKey: "…q8z4ab", deliveredVersion: 2, deliveredAt: "2026-12-05T09:58:00Z", waiting: null }]),
      now,
    );
    expect(lines).toEqual([{ contract: "api", text: "sealed to guest key …q8z4ab, delivered 2 min ago", tone: "steady" }]);
  });

  it("says what it waits for, and which version the guest has meanwhile", () => {
    const lines = guestLines(
      secret([
        { contract: "api", guestKey: null, deliveredVersion: null, deliveredAt: null, waiting: "waiting for the guest's key" },
        { contract: "db", guestKey: "…k", deliveredVersion: 1, deliveredAt: "2026-12-05T09:00:00Z", waiting: "waiting to be sealed and delivered" },
      ]),
      now,
    );
    expect(lines.map((line) => [line.text, line.tone])).toEqual([
      ["waiting for the guest's key", "waiting"],
      ["waiting to be sealed and delivered (version 1 delivered before)", "waiting"],
    ]);
  });

  it("names who receives it and reads the contracts typed", () => {
    expect(receivers(secret([]))).toBe("every contract");
    expect(receivers(secret([], ["api", "db"]))).toBe("api, db");
    expect(parseContracts(" api, db  worker ,")).toEqual(["api", "db", "worker"]);
    expect(parseContracts("   ")).toEqual([]);
  });

  it("says what a removal does", () => {
    expect(removeConfirmation("web", "token")).toContain("“token” from web");
  });
});

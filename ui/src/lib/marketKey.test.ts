import { describe, expect, it } from "vitest";
import { failureAdvice, firstStep, listingLine, typedCode, type MarketKey } from "./marketKey";

const key: MarketKey = {
  did: "did:plc:owner",
  key: "did:key:zDnaeTiq1PdzvZXUaMdezchcMJQpBdH2VN4pgrrEhMCCbmwSb",
  short: "did:key:zDnaeTiq1P…CbmwSb",
  throughPds: true,
  listing: { state: "absent" },
  identityGranted: false,
  whyIdentity: "why",
  didWebEntry: null,
};

describe("market key", () => {
  it("asks for the grant first, then the emailed code; a did:web owner edits did.json", () => {
    expect(firstStep(key)).toBe("grant");
    expect(firstStep({ ...key, identityGranted: true })).toBe("email");
    expect(firstStep({ ...key, throughPds: false })).toBe("didWeb");
  });
  it("says how the live document stands, naming another key", () => {
    expect(listingLine({ state: "listed" }).tone).toBe("steady");
    expect(listingLine({ state: "absent" }).text).toContain("lists no market key");
    expect(listingLine({ state: "other", listed: "did:key:zQ3…abc" }).text).toContain("did:key:zQ3…abc");
    expect(listingLine({ state: "unread", why: "no answer" }).text).toContain("no answer");
  });
  it("takes a typed code trimmed, and nothing as nothing", () => {
    expect(typedCode("  ABCDE-12345 \n")).toBe("ABCDE-12345");
    expect(typedCode("   ")).toBeNull();
  });
  it("says a wrong code changed nothing", () => {
    expect(failureAdvice("wrong-code")).toContain("Nothing changed");
    expect(failureAdvice("wrong-code")).toContain("not the code");
  });
});

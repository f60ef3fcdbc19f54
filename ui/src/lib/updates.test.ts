import { describe, expect, it } from "vitest";
import { updateLine } from "./updates";

describe("updateLine", () => {
  it("offers the restart only once a release is downloaded and checked", () => {
    const ready = updateLine({ state: "ready", version: "9.0.0" });
    expect(ready.text).toBe("Version 9.0.0 is ready — restart to update");
    expect(ready.action).toBe("restart");
    expect(ready.prominent).toBe(true);
    for (const view of [
      { state: "checking" as const },
      { state: "downloading" as const, version: "9.0.0", received: 1, total: 2 },
      { state: "installing" as const, version: "9.0.0" },
    ]) {
      expect(updateLine(view).action).toBeUndefined();
    }
  });

  it("says why a release was refused and that this version keeps working", () => {
    const refused = updateLine({ state: "refused", version: "9.0.0", reason: "it is signed by another key than the project's" });
    expect(refused.text).toContain("signed by another key");
    expect(refused.text).toContain("keeps working");
    expect(refused.tone).toBe("problem");
    expect(refused.action).toBe("check");
  });

  it("shows a download's progress in MiB, with its size when announced", () => {
    const mib = 1024 * 1024;
    expect(updateLine({ state: "downloading", version: "9.0.0", received: 3 * mib, total: 14.5 * mib }).text).toBe(
      "Downloading version 9.0.0: 3.0 MiB of 14.5 MiB",
    );
    expect(updateLine({ state: "downloading", version: "9.0.0", received: mib / 2, total: null }).text).toBe(
      "Downloading version 9.0.0: 0.5 MiB",
    );
  });

  it("keeps a quiet state out of the sidebar", () => {
    expect(updateLine({ state: "upToDate", version: "0.1.0" }).prominent).toBe(false);
    expect(updateLine({ state: "off" }).prominent).toBe(false);
    expect(updateLine({ state: "unreachable", reason: "offline" }).prominent).toBe(false);
  });
});

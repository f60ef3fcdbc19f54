import { describe, expect, it } from "vitest";
import type { DeploymentRow } from "../ipc";
import { row as fixture } from "./fixtures";
import { clusterDriftNotices, desktopNotification, lookingAtWindow, noticesFor, seenFrom } from "./notices";

function row(name: string, contracts: Record<string, number>): DeploymentRow {
  const counted = Object.entries(contracts).map(([phase, count]) => ({ phase, count }));
  return fixture(name, { phase: "deployed", contracts: counted });
}

describe("notices of contracts that fail or are released", () => {
  it("tells of a contract failing and of one released on a known deployment", () => {
    const seen = seenFrom([row("web", { deployed: 2 })]);
    const failed = noticesFor(seen, { kind: "Infra", name: "web", row: row("web", { deployed: 1, failed: 1 }) }, 1);
    expect(failed.map((notice) => [notice.tone, notice.title, notice.body])).toEqual([
      ["bad", "A contract failed", "web (Infra)"],
    ]);
    const released = noticesFor(seen, { kind: "Infra", name: "web", row: row("web", { failed: 1, released: 1 }) }, 2);
    expect(released.map((notice) => notice.title)).toEqual(["A contract was released"]);
  });

  it("tells of a contract drifting once, not again while the drift lasts", () => {
    const deployed = row("web", { deployed: 1 });
    const seen = seenFrom([deployed]);
    const drifted = { ...deployed, drifting: 1, version: 2 };
    const told = noticesFor(seen, { kind: "Infra", name: "web", row: drifted }, 1);
    expect(told.map((notice) => [notice.tone, notice.title])).toEqual([["bad", "A contract drifted"]]);
    const still = { ...drifted, version: 3 };
    expect(noticesFor(seen, { kind: "Infra", name: "web", row: still }, 2)).toEqual([]);
  });

  it("says nothing on first sight, on other phases, on a deployment leaving, or when nothing grew", () => {
    const seen = seenFrom([]);
    expect(noticesFor(seen, { kind: "Infra", name: "new", row: row("new", { released: 3 }) })).toEqual([]);
    expect(noticesFor(seen, { kind: "Infra", name: "new", row: row("new", { released: 3, deployed: 1 }) })).toEqual([]);
    expect(noticesFor(seen, { kind: "Infra", name: "new", row: null })).toEqual([]);
    expect(seen.has("Infra/new")).toBe(false);
  });

  it("says nothing of a late change older than the row seen, and keeps the newer row", () => {
    const seen = seenFrom([fixture("web", { version: 5, contracts: [{ phase: "released", count: 1 }] })]);
    const late = fixture("web", { version: 4, contracts: [{ phase: "deployed", count: 1 }] });
    expect(noticesFor(seen, { kind: "Infra", name: "web", row: late })).toEqual([]);
    expect(seen.get("Infra/web")?.version).toBe(5);
    const again = fixture("web", { version: 6, contracts: [{ phase: "released", count: 1 }] });
    expect(noticesFor(seen, { kind: "Infra", name: "web", row: again })).toEqual([]);
  });

  it("counts several contracts released at once in one notice", () => {
    const seen = seenFrom([row("batch", { deployed: 3 })]);
    const notices = noticesFor(seen, { kind: "Infra", name: "batch", row: row("batch", { released: 3 }) });
    expect(notices.map((notice) => notice.title)).toEqual(["3 contracts were released"]);
  });
});

describe("desktop notifications", () => {
  it("go out only while the owner is not looking at the window", () => {
    expect(lookingAtWindow(true, false)).toBe(true);
    expect(lookingAtWindow(false, false)).toBe(false);
    expect(lookingAtWindow(true, true)).toBe(false);
  });

  it("tell one notice as it is and several as one notification with a line each", () => {
    const seen = seenFrom([row("web", { deployed: 1 }), row("api", { deployed: 2 })]);
    const web = noticesFor(seen, { kind: "Infra", name: "web", row: row("web", { failed: 1 }) });
    const api = noticesFor(seen, { kind: "Infra", name: "api", row: row("api", { released: 2 }) });
    expect(desktopNotification([])).toBeUndefined();
    expect(desktopNotification(web)).toEqual({ title: "A contract failed", body: "web (Infra)" });
    expect(desktopNotification([...web, ...api])).toEqual({
      title: "2 contract updates",
      body: "A contract failed: web (Infra)\n2 contracts were released: api (Infra)",
    });
  });
});

describe("notices of kubeconfigs that stop working (cluster drift)", () => {
  const expired = new Map([["prod", "it expired at 14:02"]]);

  it("takes what drifted at the first look as known, then tells each new drift once", () => {
    const first = clusterDriftNotices(undefined, expired, true, 1);
    expect(first.notices).toEqual([]);
    const again = clusterDriftNotices(first.seen, expired, true, 2);
    expect(again.notices).toEqual([]);
    const both = new Map([...expired, ["dev", "the file is gone"]]);
    const grown = clusterDriftNotices(again.seen, both, true, 3);
    expect(grown.notices.map((notice) => [notice.tone, notice.title, notice.body, notice.kind, notice.name])).toEqual([
      ["bad", "A kubeconfig stopped working", "dev (cluster): the file is gone", "cluster", "dev"],
    ]);
    const desktop = desktopNotification([...grown.notices, ...grown.notices]);
    expect(desktop?.title).toBe("2 updates");
  });

  it("tells again of a cluster that drifts after it worked again", () => {
    const seen = clusterDriftNotices(undefined, expired, true).seen;
    const mended = clusterDriftNotices(seen, new Map(), true).seen;
    expect(clusterDriftNotices(mended, expired, true).notices).toHaveLength(1);
  });

  it("tells a kubeconfig's own trouble while the gateway is not live, and forgets nothing", () => {
    const seen = clusterDriftNotices(undefined, expired, true).seen;
    const offline = clusterDriftNotices(seen, new Map(), false);
    expect(offline.notices).toEqual([]);
    expect(clusterDriftNotices(offline.seen, expired, true).notices).toEqual([]);
    const gone = clusterDriftNotices(offline.seen, new Map([["dev", "the file is gone"]]), false, 4);
    expect(gone.notices.map((notice) => notice.body)).toEqual(["dev (cluster): the file is gone"]);
    expect(clusterDriftNotices(gone.seen, expired, true).notices).toEqual([]);
  });
});

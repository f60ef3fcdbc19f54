import { describe, expect, it } from "vitest";
import {
  DRIFTING,
  driftFix,
  applyChange,
  settleLoad,
  soonestCountdownChange,
  soonestTimeTextChange,
  timesIn,
  contractActions,
  contractSummary,
  countdown,
  countdownChangesIn,
  filterRows,
  NO_FILTER,
  newDeclaration,
  phaseTone,
  problemPlace,
  readForm,
  releaseConfirmation,
  releaseOptimistically,
  rollBack,
  syncLabel,
  syncNeedsOwner,
  syncStateLabel,
  genesisLines,
  waitingFor,
  withCountdowns,
  writeForm,
  type Contract,
} from "./deployments";
import { row } from "./fixtures";

function contract(overrides: Partial<Contract> = {}): Contract {
  return {
    name: "api",
    state: "requested",
    releaseRequestedAt: null,
    phase: "requesting",
    winner: null,
    receipt: null,
    message: null,
    ...overrides,
  };
}

describe("phase styling", () => {
  it("tells resting, moving, failed and final phases apart", () => {
    expect(["staged", "deployed"].map(phaseTone)).toEqual(["steady", "steady"]);
    expect(["pending", "deploying", "releasing", "ending", "deleting", "requesting"].map(phaseTone)).toEqual(
      Array(6).fill("waiting"),
    );
    expect(["degraded", "failed"].map(phaseTone)).toEqual(["bad", "bad"]);
    expect(["released", "ended"].map(phaseTone)).toEqual(["final", "final"]);
  });

  it("shows a phase it does not know as in motion rather than as settled", () => {
    expect(phaseTone("someNewPhase")).toBe("waiting");
    expect(phaseTone(null)).toBe("waiting");
  });
});

describe("waiting reasons", () => {
  it("says what a requesting contract waits for, preferring the controller's own words", () => {
    expect(waitingFor(contract())).toMatch(/bids/);
    expect(waitingFor(contract({ message: "waiting for the market to be connected" }))).toBe(
      "the market to be connected",
    );
  });

  it("reads the controller's times as countdowns, never as raw times", () => {
    const now = Date.parse("2026-12-06T18:00:00Z");
    const message = "waiting for bids: none from 2 bidder(s) asked; the window closes at 2026-12-06T18:01:05Z";
    expect(waitingFor(contract({ message }), now)).toBe("bids: none from 2 bidder(s) asked; the window closes in 1 min 05 s");
    expect(withCountdowns("retrying: refused; next try at 2026-12-06T18:00:04.250Z, gives up at 2026-12-06T19:30:00+00:00", now)).toBe(
      "retrying: refused; next try in 0 min 04 s, gives up in 1 h 30 min",
    );
    expect(withCountdowns("failed at 2026-12-06T17:57:50Z", now)).toBe("failed 2 min 10 s ago");
    expect(withCountdowns("no time here", now)).toBe("no time here");
  });

  it("says a release waits for the provider, and a steady contract waits for nothing", () => {
    expect(waitingFor(contract({ phase: "releasing" }))).toMatch(/confirm the release/);
    expect(waitingFor(contract({ phase: "deployed", state: "requested" }))).toBeUndefined();
    expect(waitingFor(contract({ phase: "released", state: "released" }))).toBeUndefined();
  });

  it("says an intent not acted on yet waits for the controller", () => {
    expect(waitingFor(contract({ phase: "staged", state: "requested" }))).toMatch(/request/);
    expect(waitingFor(contract({ phase: null }))).toMatch(/controller/);
  });
});

describe("contract actions", () => {
  it("offers release on a running or requested contract, and release again once released", () => {
    expect(contractActions(contract({ phase: "deployed" }))).toEqual(["release"]);
    expect(contractActions(contract({ phase: "releasing", state: "released" }))).toEqual(["releaseAgain"]);
    expect(contractActions(contract({ phase: "failed", state: "released" }))).toEqual(["releaseAgain"]);
    expect(contractActions(contract({ phase: "released", state: "released" }))).toEqual([]);
  });

  it("offers request on a staged contract", () => {
    expect(contractActions(contract({ phase: "staged", state: "staged" }))).toEqual(["request"]);
  });
});

describe("the list", () => {
  const rows = [
    row("api", { description: "Public API", phase: "deployed" }),
    row("batch", { kind: "EphemeralInfra", phase: "deploying" }),
    row("web", { description: "the web front" }),
  ];

  it("searches names and descriptions, case aside", () => {
    expect(filterRows(rows, { ...NO_FILTER, search: "WEB" }).map((r) => r.name)).toEqual(["web"]);
    expect(filterRows(rows, { ...NO_FILTER, search: "public" }).map((r) => r.name)).toEqual(["api"]);
  });

  it("filters by kind and by phase together", () => {
    expect(filterRows(rows, { ...NO_FILTER, kind: "EphemeralInfra" }).map((r) => r.name)).toEqual(["batch"]);
    expect(filterRows(rows, { ...NO_FILTER, kind: "Infra", phase: "deployed" }).map((r) => r.name)).toEqual(["api"]);
  });

  it("applies live changes: replace, insert in name order, remove", () => {
    const replaced = applyChange(rows, { kind: "Infra", name: "api", row: row("api", { phase: "releasing" }) });
    expect(replaced[0]?.phase).toBe("releasing");
    const inserted = applyChange(rows, { kind: "Infra", name: "cache", row: row("cache") });
    expect(inserted.map((r) => r.name)).toEqual(["api", "batch", "cache", "web"]);
    const removed = applyChange(rows, { kind: "EphemeralInfra", name: "batch", row: null });
    expect(removed.map((r) => r.name)).toEqual(["api", "web"]);
    expect(applyChange(rows, { kind: "Infra", name: "batch", row: null })).toHaveLength(3);
  });

  it("keeps the newer state of a row whatever order its changes arrive in", () => {
    const list = [row("web", { version: 5, phase: "deployed" })];
    const late = applyChange(list, { kind: "Infra", name: "web", row: row("web", { version: 4, phase: "deploying" }) });
    expect(late).toBe(list);
    const recreated = applyChange(list, { kind: "Infra", name: "web", row: row("web", { uid: "other", version: 1 }) });
    expect(recreated[0]?.uid).toBe("other");
    const same = applyChange(list, { kind: "Infra", name: "web", row: row("web", { version: 5, writer: "laptop" }) });
    expect(same[0]?.writer).toBe("laptop");
  });

  it("settles a list loaded while changes arrived, whether it was read before or after them", () => {
    const arrived = [
      { kind: "Infra", name: "web", row: row("web", { version: 3, phase: "deployed" }) },
      { kind: "Infra", name: "gone", row: null },
      { kind: "Infra", name: "new", row: row("new", { version: 1 }) },
    ];
    const readBefore = [row("gone"), row("web", { version: 2, phase: "deploying" })];
    const readAfter = [row("new", { version: 1 }), row("web", { version: 4, phase: "releasing" })];
    const phases = (rows: readonly ReturnType<typeof row>[]) => rows.map((r) => `${r.name}:${r.phase}`);
    expect(phases(settleLoad(readBefore, arrived))).toEqual(["new:staged", "web:deployed"]);
    expect(phases(settleLoad(readAfter, arrived))).toEqual(["new:staged", "web:releasing"]);
  });

  it("keeps the list in name-then-kind order whatever order rows arrive in", () => {
    const names = ["m", "a", "z", "m", "b", "y", "a", "n"];
    let list: readonly ReturnType<typeof row>[] = [];
    names.forEach((name, i) => {
      const kind = i % 2 === 0 ? "Infra" : "EphemeralInfra";
      list = applyChange(list, { kind, name, row: row(name, { kind }) });
    });
    const keys = list.map((r) => `${r.name}/${r.kind}`);
    expect(keys).toEqual(["a/EphemeralInfra", "a/Infra", "b/Infra", "m/EphemeralInfra", "m/Infra", "n/EphemeralInfra", "y/EphemeralInfra", "z/Infra"]);
  });

  it("sums up the contracts and the sync state in words", () => {
    expect(contractSummary(row("a", { contracts: [{ phase: "deployed", count: 2 }, { phase: "requesting", count: 1 }] }))).toBe(
      "2 deployed · 1 requesting",
    );
    expect(contractSummary(row("a"))).toBe("No contracts");
    expect(syncLabel("offline")).toBe("Waiting to sync");
    expect(syncLabel("gone")).toBe("Record gone");
    expect(syncNeedsOwner("gone")).toBe(true);
  });

  it("lists the creation-only fields a record changed elsewhere", () => {
    const changed = {
      state: "changedElsewhere" as const,
      changes: [{ contract: "api", field: "computeKind", ours: "vm", theirs: "deno" }],
    };
    expect(genesisLines(changed)).toEqual(["computeKind of contract api: vm here, deno in the record"]);
    expect(genesisLines({ state: "conflict" })).toEqual([]);
    expect(syncStateLabel(changed)).toBe("Changed elsewhere");
  });

  it("names the reconciler's sync outcome, its reason kept as data", () => {
    expect(syncStateLabel({ state: "writeFailed", error: "HTTP 503" })).toBe("Write failed, retrying");
    expect(syncStateLabel({ state: "published" })).toBe("Published");
    expect(syncStateLabel(null)).toBe("—");
  });
});

describe("the optimistic release", () => {
  it("shows releasing at once and rolls back to exactly what was there when refused", () => {
    const contracts = [contract({ name: "api", phase: "deployed" }), contract({ name: "db", phase: "deployed" })];
    const { contracts: shown, pending } = releaseOptimistically("web", contracts, "api", "2026-12-03T10:00:00.000Z");
    expect(shown[0]).toMatchObject({ phase: "releasing", state: "released", releaseRequestedAt: "2026-12-03T10:00:00.000Z" });
    expect(shown[1]).toEqual(contracts[1]);
    expect(rollBack(shown, pending!)).toEqual(contracts);
  });

  it("does nothing for a contract that is not there", () => {
    const { pending } = releaseOptimistically("web", [contract()], "nope", "2026-12-03T10:00:00.000Z");
    expect(pending).toBeUndefined();
  });

  it("names what will be released, and who releases it", () => {
    const text = releaseConfirmation("web", contract({ winner: "did:plc:bidder" }), false);
    expect(text).toContain("“api”");
    expect(text).toContain("did:plc:bidder");
    expect(text).toContain("Another device");
  });
});

describe("the TTL countdown", () => {
  const now = Date.parse("2026-12-03T10:00:00.000Z");
  it("counts minutes and seconds, then hours, then says expired", () => {
    expect(countdown("2026-12-03T10:04:05.000Z", now)).toBe("in 4 min 05 s");
    expect(countdown("2026-12-03T12:10:00.000Z", now)).toBe("in 2 h 10 min");
    expect(countdown("2026-12-03T09:59:59.000Z", now)).toBe("expired");
  });

  it("knows when its text next changes: each second under an hour, each minute above, never once expired", () => {
    const cases: [string, number | undefined][] = [
      ["2026-12-03T10:04:05.000Z", 1],
      ["2026-12-03T10:04:05.400Z", 401],
      ["2026-12-03T12:10:00.000Z", 1],
      ["2026-12-03T12:10:30.000Z", 30_001],
      ["2026-12-03T11:00:20.000Z", 20_001],
      ["2026-12-03T10:00:01.500Z", 501],
      ["2026-12-03T10:00:00.500Z", undefined],
      ["2026-12-03T09:59:59.000Z", undefined],
      ["not a time", undefined],
    ];
    for (const [expiresAt, changesIn] of cases) {
      const at = countdownChangesIn(expiresAt, now);
      expect(at, expiresAt).toBe(changesIn);
      if (at === undefined) continue;
      expect(countdown(expiresAt, now + at), expiresAt).not.toBe(countdown(expiresAt, now));
      expect(countdown(expiresAt, now + at - 1), expiresAt).toBe(countdown(expiresAt, now));
    }
  });

  it("waits for the soonest of many countdowns, and not at all for none that will change", () => {
    const expiries = ["2026-12-03T12:10:30.000Z", "2026-12-03T10:04:05.400Z", "2026-12-03T09:00:00.000Z"];
    expect(soonestCountdownChange(expiries, now)).toBe(401);
    expect(soonestCountdownChange(["2026-12-03T09:00:00.000Z"], now)).toBeUndefined();
    expect(soonestCountdownChange([], now)).toBeUndefined();
  });
});

describe("the declaration editor", () => {
  it("starts a declaration of each kind", () => {
    expect(JSON.parse(newDeclaration("EphemeralInfra")).spec.ttlSeconds).toBe(3600);
    expect(JSON.parse(newDeclaration("Infra")).kind).toBe("Infra");
  });

  it("writes the form's fields into the JSON and keeps everything else", () => {
    const json = JSON.stringify({
      kind: "Infra",
      metadata: { name: "old", labels: { team: "a" } },
      spec: { contracts: [{ name: "api", state: "requested", userData: "#!/bin/sh" }], secrets: [] },
    });
    const written = JSON.parse(writeForm(json, { name: "web", description: "front", contracts: ["api", "worker", ""] }));
    expect(written.metadata).toEqual({ name: "web", labels: { team: "a" } });
    expect(written.spec.description).toBe("front");
    expect(written.spec.contracts).toEqual([
      { name: "api", state: "requested", userData: "#!/bin/sh" },
      { name: "worker", state: "staged" },
    ]);
    expect(written.spec.secrets).toEqual([]);
    expect(readForm(JSON.stringify(written))).toEqual({
      kind: "Infra",
      name: "web",
      description: "front",
      contracts: ["api", "worker"],
    });
    expect(readForm("{ not json")).toBeUndefined();
  });

  it("says where a problem is in words", () => {
    expect(problemPlace({ path: "/spec/contracts/1/name", message: "", fix: "" })).toBe("Contracts › contract 2 › name");
    expect(problemPlace({ path: "/spec/contracts/1", message: "", fix: "" })).toBe("Contracts › contract 2");
    expect(problemPlace({ path: "/metadata/name", message: "", fix: "" })).toBe("Name");
    expect(problemPlace({ path: "/spec/description", message: "", fix: "" })).toBe("Description");
    expect(problemPlace({ path: "", message: "", fix: "" })).toBe("the declaration");
    expect(problemPlace({ path: "/metadata/labels/a~1b", message: "", fix: "" })).toBe("metadata › labels › a/b");
  });
});

describe("drift", () => {
  it("keeps only the deployments with a drifted contract under the Drifted filter", () => {
    const rows = [row("calm"), row("moved", { drifting: 1, phase: "deployed" })];
    expect(filterRows(rows, { ...NO_FILTER, phase: DRIFTING }).map((kept) => kept.name)).toEqual(["moved"]);
    expect(driftFix("release")).toContain("Release it");
    expect(driftFix("keeper")).toContain("nothing to click here");
  });
});

describe("the detail's clock", () => {
  const now = Date.parse("2026-12-03T10:00:00.000Z");

  it("finds every time in a view, in its fields and inside its texts", () => {
    const view = {
      row: { name: "web", expiresAt: "2026-12-03T11:00:00Z", phase: "requesting" },
      contracts: [
        {
          message: "retrying: refused; next try at 2026-12-03T10:00:04.250Z, gives up at 2026-12-03T11:30:00+00:00",
          history: [{ at: "2026-12-03T09:58:00Z", phase: "requesting" }],
          price: 3,
          winner: null,
        },
      ],
    };
    expect(timesIn(view)).toEqual([
      "2026-12-03T11:00:00Z",
      "2026-12-03T10:00:04.250Z",
      "2026-12-03T11:30:00+00:00",
      "2026-12-03T09:58:00Z",
    ]);
    expect(timesIn({ name: "web", count: 2, none: null })).toEqual([]);
  });

  it("ticks each second near now, at a time's next minute beyond an hour, and never with none", () => {
    const soon = "2026-12-03T10:40:00.500Z";
    expect(soonestTimeTextChange([soon, "2026-12-03T15:00:30Z"], now)).toBe(501);
    expect(countdown(soon, now + 501)).not.toBe(countdown(soon, now));
    expect(soonestTimeTextChange(["2026-12-03T09:20:00Z"], now)).toBe(1000);
    const ahead = "2026-12-03T12:10:30.000Z";
    const aheadIn = soonestTimeTextChange([ahead], now);
    expect(aheadIn).toBe(30_001);
    expect(countdown(ahead, now + 30_001)).not.toBe(countdown(ahead, now));
    expect(countdown(ahead, now + 30_000)).toBe(countdown(ahead, now));
    const past = "failed at 2026-12-03T07:59:40.000Z";
    const pastIn = soonestTimeTextChange(timesIn(past), now);
    expect(pastIn).toBe(40_001);
    expect(withCountdowns(past, now + 40_001)).not.toBe(withCountdowns(past, now));
    expect(withCountdowns(past, now + 39_000)).toBe(withCountdowns(past, now));
    expect(soonestTimeTextChange([ahead, "2026-12-03T07:59:40.000Z"], now)).toBe(30_001);
    expect(soonestTimeTextChange([], now)).toBeUndefined();
    expect(soonestTimeTextChange(["not a time"], now)).toBeUndefined();
  });
});

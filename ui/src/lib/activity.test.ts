import { describe, expect, it } from "vitest";
import {
  DeploymentIndex,
  deploymentOfRecord,
  describeStep,
  filterSteps,
  foldSummary,
  groupSteps,
  KEPT_STEPS,
  OTHER_GROUP,
  remember,
  writtenRecord,
  type Step,
} from "./activity";

const failed: Step = {
  at: "2026-12-03T10:00:00.000Z",
  kind: "Infra",
  name: "web",
  what: { type: "failed", error: "the repo: unreachable", failures: 2, retryInMs: 4000 },
};
const wrote: Step = {
  at: "2026-12-03T10:00:02.000Z",
  kind: "Record",
  name: "computer.socialweb.infra",
  what: { type: "wrote", uri: "at://did:plc:owner/computer.socialweb.infra/web", cid: "bafyreia" },
};
const finished: Step = { at: "2026-12-03T10:00:01.000Z", kind: "AtprotoRecord", name: "infra-1", what: { type: "finished", nextInMs: null } };

describe("the activity view", () => {
  it("says each step in words, with its retry", () => {
    expect(describeStep(failed)).toBe("failed (2×): the repo: unreachable; retries in 4 s");
    expect(describeStep(finished)).toBe("in order");
    expect(describeStep({ ...finished, what: { type: "resynced", objects: 12 } })).toBe("all 12 looked at again");
  });

  it("filters by text, failures and record writes", () => {
    expect(filterSteps([failed, finished], "", "failures")).toEqual([failed]);
    expect(filterSteps([failed, finished], "atproto", "all")).toEqual([finished]);
    expect(filterSteps([failed, finished], "unreachable", "all")).toEqual([failed]);
    expect(filterSteps([failed, finished, wrote], "", "writes")).toEqual([wrote]);
    expect(filterSteps([failed, finished, wrote], "infra/web", "all")).toEqual([wrote]);
  });

  it("finds the deployment a record belongs to by its collection and key", () => {
    expect(deploymentOfRecord("at://did:plc:owner/computer.socialweb.infra/web")).toEqual({ kind: "Infra", name: "web" });
    expect(deploymentOfRecord("at://did:plc:owner/computer.socialweb.ephemeralInfra/job")).toEqual({
      kind: "EphemeralInfra",
      name: "job",
    });
    expect(deploymentOfRecord("at://did:plc:owner/computer.socialweb.infra/self")).toBeUndefined();
    expect(deploymentOfRecord("at://did:plc:owner/com.publicdomainrelay.temp.market.rfp/3l")).toBeUndefined();
  });

  it("says which record a write was, by its at-uri", () => {
    expect(describeStep(wrote)).toBe("record written: at://did:plc:owner/computer.socialweb.infra/web");
    expect(writtenRecord(wrote)).toBe("at://did:plc:owner/computer.socialweb.infra/web");
    expect(writtenRecord(failed)).toBeUndefined();
  });

  it("keeps the newest steps first, up to its limit", () => {
    let steps: Step[] = [];
    for (let n = 0; n < KEPT_STEPS + 5; n++) steps = remember(steps, { ...finished, name: `d${n}` });
    expect(steps).toHaveLength(KEPT_STEPS);
    expect(steps[0]?.name).toBe(`d${KEPT_STEPS + 4}`);
  });
});

describe("the activity grouped by deployment", () => {
  const webUid = "0b6f5d1e-4c1a-4f7e-9a53-2d2b7f1c9e01";
  const jobUid = "7a1c2d3e-5f60-4718-8a9b-0c1d2e3f4a5b";
  const deployments = [
    { kind: "Infra", name: "web", uid: webUid, recordUri: "at://did:plc:owner/computer.socialweb.infra/web" },
    { kind: "EphemeralInfra", name: "job", uid: jobUid, recordUri: null },
  ];
  const index = new DeploymentIndex(deployments);
  let clock = 0;
  const at = () => new Date(Date.UTC(2026, 11, 3, 10, 0, clock++)).toISOString();
  const step = (kind: string, name: string | null, what: Step["what"]): Step => ({ at: at(), kind, name, what });
  const started = (kind: string, name: string) => step(kind, name, { type: "started" });
  const inOrder = (kind: string, name: string) => step(kind, name, { type: "finished", nextInMs: null });

  it("finds the deployment of its own steps, its record's writer, its contracts and its record", () => {
    expect(index.of(started("Infra", "web"))).toEqual({ kind: "Infra", name: "web" });
    expect(index.of(started("AtprotoRecord", `infra-${webUid}`))).toMatchObject({ kind: "Infra", name: "web" });
    expect(index.of(started("AtprotoRecord", `ephemeral-${jobUid}`))).toMatchObject({ kind: "EphemeralInfra", name: "job" });
    const contract = started("ComputeContract", `${webUid}-api`);
    expect(index.of(contract)).toMatchObject({ kind: "Infra", name: "web" });
    expect(index.subject(contract)).toBe("contract api");
    expect(index.of(wrote)).toMatchObject({ kind: "Infra", name: "web" });
    // A record of a deployment not (or no longer) listed still names it by collection and key.
    const other = { ...wrote, what: { type: "deleted" as const, uri: "at://did:plc:owner/computer.socialweb.infra/old" } };
    expect(index.of(other)).toEqual({ kind: "Infra", name: "old" });
    // The index, the market and resyncs are about no one deployment.
    expect(index.of(started("InfraCollection", "self"))).toBeUndefined();
    expect(index.of(started("AtprotoRecord", "market-rfp-1"))).toBeUndefined();
    expect(index.of(started("ComputeContract", "not-a-uid-api"))).toBeUndefined();
    expect(index.of(step("Infra", null, { type: "resynced", objects: 3 }))).toBeUndefined();
  });

  it("groups by deployment, newest group first and the rest last, each run of routine steps folded", () => {
    const oldest = started("Infra", "web");
    const webSteps = [
      oldest,
      inOrder("Infra", "web"),
      step("ComputeContract", `${webUid}-api`, { type: "failed", error: "no bid", failures: 1, retryInMs: 5000 }),
      started("AtprotoRecord", `infra-${webUid}`),
      inOrder("AtprotoRecord", `infra-${webUid}`),
    ];
    const index1 = started("InfraCollection", "self");
    const jobStep = started("EphemeralInfra", "job");
    const newestFirst = [jobStep, ...webSteps.slice(0, 3), index1, ...webSteps.slice(3)].reverse();
    const groups = groupSteps(newestFirst, index);
    expect(groups.map((group) => group.key)).toEqual(["Infra/web", "EphemeralInfra/job", OTHER_GROUP]);
    const web = groups[0]!;
    expect(web.steps).toHaveLength(5);
    expect(web.entries.map((entry) => entry.type)).toEqual(["folded", "step", "folded"]);
    const [newer, failure, older] = web.entries;
    expect(newer?.type === "folded" && newer.steps).toHaveLength(2);
    expect(newer?.type === "folded" && newer.summary).toBe("2 routine steps: in order, looked at");
    expect(failure?.type === "step" && failure.step.what.type).toBe("failed");
    expect(older?.type === "folded" && older.steps).toEqual([webSteps[1], oldest]);
  });

  it("keeps a fold's key while newer steps arrive, and never repeats a key", () => {
    const first = started("Infra", "web");
    const before = groupSteps([inOrder("Infra", "web"), first], index)[0]!.entries[0]!;
    const after = groupSteps([started("Infra", "web"), inOrder("Infra", "web"), inOrder("Infra", "web"), first], index)[0]!;
    expect(after.entries).toHaveLength(1);
    expect(after.entries[0]!.key).toBe(before.key);
    const failed: Step = step("Infra", "web", { type: "failed", error: "x", failures: 1, retryInMs: null });
    const keys = groupSteps([failed, { ...failed }, { ...failed }], index)[0]!.entries.map((entry) => entry.key);
    expect(new Set(keys).size).toBe(3);
  });

  it("says what a fold holds", () => {
    expect(foldSummary([started("Infra", "web")])).toBe("1 routine step: looked at");
    expect(foldSummary([step("Infra", null, { type: "resynced", objects: 4 }), inOrder("Infra", "web")])).toBe(
      "2 routine steps: all 4 looked at again, in order",
    );
  });
});

import { describe, expect, it } from "vitest";
import {
  deploymentOfRecord,
  describeStep,
  filterSteps,
  KEPT_STEPS,
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

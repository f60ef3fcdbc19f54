import { describe, expect, it } from "vitest";
import { describeStep, filterSteps, KEPT_STEPS, remember, type Step } from "./activity";

const failed: Step = {
  at: "2026-12-03T10:00:00.000Z",
  kind: "Infra",
  name: "web",
  what: { type: "failed", error: "the repo: unreachable", failures: 2, retryInMs: 4000 },
};
const finished: Step = { at: "2026-12-03T10:00:01.000Z", kind: "AtprotoRecord", name: "infra-1", what: { type: "finished", nextInMs: null } };

describe("the activity view", () => {
  it("says each step in words, with its retry", () => {
    expect(describeStep(failed)).toBe("failed (2×): the repo: unreachable; retries in 4 s");
    expect(describeStep(finished)).toBe("in order");
    expect(describeStep({ ...finished, what: { type: "resynced", objects: 12 } })).toBe("all 12 looked at again");
  });

  it("filters by text and failures", () => {
    expect(filterSteps([failed, finished], "", true)).toEqual([failed]);
    expect(filterSteps([failed, finished], "atproto", false)).toEqual([finished]);
    expect(filterSteps([failed, finished], "unreachable", false)).toEqual([failed]);
  });

  it("keeps the newest steps first, up to its limit", () => {
    let steps: Step[] = [];
    for (let n = 0; n < KEPT_STEPS + 5; n++) steps = remember(steps, { ...finished, name: `d${n}` });
    expect(steps).toHaveLength(KEPT_STEPS);
    expect(steps[0]?.name).toBe(`d${KEPT_STEPS + 4}`);
  });
});

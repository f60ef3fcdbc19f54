import { describe, expect, it } from "vitest";
import type { IndexHealth } from "../ipc";
import { liveCount, roomWait } from "./index-health";

const full: IndexHealth = {
  live: 256,
  maxLive: 256,
  waitingForRoom: ["computer.socialweb.infra/3lwait"],
  problem: "The index at self already lists 256 live deployments",
};

describe("the index in the Deployments section", () => {
  it("counts what the index lists of the most it may", () => {
    expect(liveCount({ ...full, live: 241, waitingForRoom: [] })).toBe("241 / 256 live");
    expect(liveCount({ ...full, live: null })).toBeNull();
    expect(liveCount(null)).toBeNull();
  });

  it("tells only the rows the full index has no room for what they wait for", () => {
    const waiting = { recordUri: "at://did:plc:abc/computer.socialweb.infra/3lwait" };
    expect(roomWait(waiting, full)).toBe("waiting: your index is full (256 live); end or release one");
    expect(roomWait({ recordUri: "at://did:plc:abc/computer.socialweb.infra/3lother" }, full)).toBeNull();
    expect(roomWait({ recordUri: "at://did:plc:abc/computer.socialweb.ephemeralInfra/3lwait" }, full)).toBeNull();
    expect(roomWait({ recordUri: null }, full)).toBeNull();
    expect(roomWait(waiting, null)).toBeNull();
  });
});

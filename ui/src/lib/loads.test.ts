import { describe, expect, it } from "vitest";
import { LatestLoad } from "./loads";

/** A read that resolves or rejects when the test says. */
function pending<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { read: () => promise, resolve, reject };
}

describe("LatestLoad", () => {
  it("hands back what it read with the changes that arrived meanwhile, and none after", async () => {
    const loads = new LatestLoad<string>();
    loads.arrive("before");
    const read = pending<number[]>();
    const loading = loads.run(read.read);
    expect(loads.underWay).toBe(true);
    loads.arrive("during");
    read.resolve([1, 2]);
    expect(await loading).toEqual({ value: [1, 2], arrived: ["during"] });
    expect(loads.underWay).toBe(false);
  });

  it("drops an earlier load that finishes after a later one started", async () => {
    const loads = new LatestLoad<string>();
    const first = pending<string>();
    const second = pending<string>();
    const firstLoading = loads.run(first.read);
    loads.arrive("a");
    const secondLoading = loads.run(second.read);
    loads.arrive("b");
    first.resolve("old");
    expect(await firstLoading).toBeUndefined();
    expect(loads.underWay).toBe(true);
    second.resolve("new");
    expect(await secondLoading).toEqual({ value: "new", arrived: ["b"] });
    expect(loads.underWay).toBe(false);
  });

  it("rejects with the latest load's failure and drops a superseded one's", async () => {
    const loads = new LatestLoad<string>();
    const first = pending<string>();
    const second = pending<string>();
    const firstLoading = loads.run(first.read);
    const secondLoading = loads.run(second.read);
    first.reject(new Error("old failure"));
    expect(await firstLoading).toBeUndefined();
    second.reject(new Error("signed out"));
    await expect(secondLoading).rejects.toThrow("signed out");
    expect(loads.underWay).toBe(false);
  });
});

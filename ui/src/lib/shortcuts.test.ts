import { describe, expect, it } from "vitest";
import { ariaShortcut, deploymentShortcut, shortcutContract, shortcutText } from "./shortcuts";
import type { Contract } from "./deployments";

const press = (key: string, extra: Partial<{ ctrlKey: boolean; metaKey: boolean; altKey: boolean; shiftKey: boolean }> = {}) => ({
  key,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  shiftKey: false,
  ...extra,
});

describe("deploymentShortcut", () => {
  it("reads Ctrl+R as request and Ctrl+Shift+R as release", () => {
    expect(deploymentShortcut(press("r", { ctrlKey: true }), false)).toBe("request");
    expect(deploymentShortcut(press("R", { ctrlKey: true, shiftKey: true }), false)).toBe("release");
    expect(deploymentShortcut(press("e", { ctrlKey: true }), false)).toBe("edit");
    expect(deploymentShortcut(press("i", { ctrlKey: true }), false)).toBe("inspect");
  });
  it("takes Cmd on macOS and nothing without the command key or with Alt", () => {
    expect(deploymentShortcut(press("r", { metaKey: true }), true)).toBe("request");
    expect(deploymentShortcut(press("r", { ctrlKey: true }), true)).toBeUndefined();
    expect(deploymentShortcut(press("r"), false)).toBeUndefined();
    expect(deploymentShortcut(press("r", { ctrlKey: true, altKey: true }), false)).toBeUndefined();
    expect(deploymentShortcut(press("e", { ctrlKey: true, shiftKey: true }), false)).toBeUndefined();
  });
});

describe("shortcutText and ariaShortcut", () => {
  it("name the chord for people and for assistive technology", () => {
    expect(shortcutText("release", false)).toBe("Ctrl+Shift+R");
    expect(shortcutText("release", true)).toBe("⌘⇧R");
    expect(shortcutText("edit", false)).toBe("Ctrl+E");
    expect(ariaShortcut("release", false)).toBe("Control+Shift+R");
    expect(ariaShortcut("inspect", true)).toBe("Meta+I");
  });
});

describe("shortcutContract", () => {
  const contract = (name: string, phase: string | null, state: string): Contract => ({
    name,
    phase,
    state,
    releaseRequestedAt: null,
    winner: null,
    receipt: null,
    message: null,
  });
  const contracts = [contract("api", "staged", "staged"), contract("worker", "requesting", "requested"), contract("db", "staged", "staged")];
  it("acts on the focused contract when it offers the action", () => {
    expect(shortcutContract(contracts, "request", "db")?.name).toBe("db");
  });
  it("else on the first that offers it", () => {
    expect(shortcutContract(contracts, "request", "worker")?.name).toBe("api");
    expect(shortcutContract(contracts, "release", undefined)?.name).toBe("worker");
  });
  it("answers nothing when none offers it", () => {
    expect(shortcutContract([contract("old", "released", "released")], "release", undefined)).toBeUndefined();
  });
});

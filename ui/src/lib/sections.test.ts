import { describe, expect, it } from "vitest";
import { SECTIONS, sectionForShortcut, shortcutLabel, usesMetaKey, type ShortcutKey } from "./sections";

const press = (key: string, modifiers: Partial<ShortcutKey> = {}): ShortcutKey => ({
  key,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  shiftKey: false,
  ...modifiers,
});

describe("sections", () => {
  it("lists deployments, clusters, activity and settings in that order", () => {
    expect(SECTIONS.map((section) => section.id)).toEqual(["deployments", "clusters", "activity", "settings"]);
  });

  it("gives every section its own shortcut key", () => {
    const keys = SECTIONS.map((section) => section.key);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe("sectionForShortcut", () => {
  it("opens a section with Ctrl and its key on Linux and Windows", () => {
    expect(sectionForShortcut(press("2", { ctrlKey: true }), false)).toBe("clusters");
    expect(sectionForShortcut(press(",", { ctrlKey: true }), false)).toBe("settings");
  });

  it("opens a section with Cmd and its key on macOS, and ignores Ctrl there", () => {
    expect(sectionForShortcut(press("3", { metaKey: true }), true)).toBe("activity");
    expect(sectionForShortcut(press("3", { ctrlKey: true }), true)).toBeUndefined();
  });

  it("ignores the key without the modifier, or with extra modifiers", () => {
    expect(sectionForShortcut(press("1"), false)).toBeUndefined();
    expect(sectionForShortcut(press("1", { ctrlKey: true, shiftKey: true }), false)).toBeUndefined();
    expect(sectionForShortcut(press("1", { ctrlKey: true, altKey: true }), false)).toBeUndefined();
  });

  it("ignores keys that are not a section's", () => {
    expect(sectionForShortcut(press("9", { ctrlKey: true }), false)).toBeUndefined();
  });
});

describe("shortcut labels", () => {
  it("are written the way each platform writes them", () => {
    expect(shortcutLabel("1", false)).toBe("Ctrl+1");
    expect(shortcutLabel("1", true)).toBe("⌘1");
  });

  it("use Cmd on Apple platforms only", () => {
    expect(usesMetaKey("MacIntel")).toBe(true);
    expect(usesMetaKey("Linux x86_64")).toBe(false);
    expect(usesMetaKey("Win32")).toBe(false);
  });
});

// The window talks to Rust only through src/ipc: this test reads every source file and fails
// when anything outside src/ipc imports the Tauri API, a Tauri plugin or the generated bindings.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|svelte)$/.test(name) ? [path] : [];
  });
}

describe("the IPC boundary", () => {
  it("is crossed only by src/ipc", () => {
    const crossings = sourceFiles(SRC)
      .filter((path) => !relative(SRC, path).startsWith("ipc"))
      .filter((path) => /from\s+["'](@tauri-apps\/[^"']*|[./]*ipc\/bindings)["']/.test(readFileSync(path, "utf8")))
      .map((path) => relative(SRC, path));
    expect(crossings).toEqual([]);
  });

  it("finds the source files it checks", () => {
    expect(sourceFiles(SRC).length).toBeGreaterThan(3);
  });
});

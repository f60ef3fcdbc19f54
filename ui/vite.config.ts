// Vite builds the window into dist/, which the Tauri shell embeds. Vitest runs the unit tests of
// the view logic (src/**/*.test.ts) in Node: they test pure TypeScript, not the DOM.
import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";

export default defineConfig({
  plugins: [svelte()],
  clearScreen: false,
  build: {
    target: "safari16",
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    // One stylesheet, linked from the page's head: the prerendered first screen is painted with
    // every component's styles before any script runs.
    cssCodeSplit: false,
  },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});

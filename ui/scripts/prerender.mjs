// Renders the window's first screen into dist/index.html after `vite build`, so the window
// paints the app (its sidebar, the open section in its loading state) as soon as the page is
// parsed, before any script has run; `src/start.ts` then hydrates that markup.
//
// The first screen is what the window shows before Rust has answered anything: the render runs
// with an IPC that never answers, so every view is in its loading state, exactly as the window
// is until its first answers arrive.
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { createServer } from "vite";

const root = fileURLToPath(new URL("..", import.meta.url));
const page = new URL("../dist/index.html", import.meta.url);
const MOUNT = '<div id="app"></div>';

/** The Tauri globals `@tauri-apps/api` reads, with an IPC that never answers. */
function unansweredIpc() {
  const pending = () => new Promise(() => {});
  globalThis.window = {
    __TAURI_INTERNALS__: { invoke: pending, transformCallback: () => 0 },
  };
  // The platform decides the shortcuts' labels (Ctrl or ⌘); the package is built on its platform.
  globalThis.navigator ??= { platform: process.platform === "darwin" ? "MacIntel" : "Linux x86_64" };
}

async function renderFirstScreen() {
  const vite = await createServer({ root, logLevel: "error", server: { middlewareMode: true }, appType: "custom" });
  try {
    const { render } = await vite.ssrLoadModule("svelte/server");
    const { default: App } = await vite.ssrLoadModule("/src/App.svelte");
    return render(App);
  } finally {
    await vite.close();
  }
}

unansweredIpc();
const html = await readFile(page, "utf8");
if (!html.includes(MOUNT)) throw new Error(`dist/index.html has no empty ${MOUNT} to render into`);
const { head, body } = await renderFirstScreen();
if (!body.includes('aria-label="Sections"')) throw new Error("the first screen rendered without the app's navigation");
// Replaced by functions: a `$` in the rendered text must not be read as a replacement pattern.
const rendered = html.replace("</head>", () => `${head}</head>`).replace(MOUNT, () => `<div id="app">${body}</div>`);
await writeFile(page, rendered);

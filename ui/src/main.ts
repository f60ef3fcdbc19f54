// The window's entry point, kept small. The first screen is already in the page (rendered at
// build time by `scripts/prerender.mjs`), so the window paints it as soon as the page is parsed.
// Once that frame is on screen (two animation frames: the first runs before paint, the second
// after it) the shell is told, and only then is the app's code loaded to bring the screen to life.
import { uiReady } from "./ipc";
import "./styles.css";

/** A window that opens hidden (minimized, on another workspace) paints no frame until it is
 * shown; its app comes to life anyway (the session restored, the controller running) after this. */
const START_AT_LATEST_MS = 1000;

let started = false;

/** Loads the app's code, once. */
function start() {
  if (started) return;
  started = true;
  void import("./start");
}

requestAnimationFrame(() =>
  requestAnimationFrame(() => {
    void uiReady();
    start();
  }),
);
if (document.visibilityState === "hidden") start();
else setTimeout(start, START_AT_LATEST_MS);

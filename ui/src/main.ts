// The window's entry point, kept small. The first screen is already in the page (rendered at
// build time by `scripts/prerender.mjs`), so the window paints it as soon as the page is parsed.
// Once that frame is on screen (two animation frames: the first runs before paint, the second
// after it) the shell is told, and only then is the app's code loaded to bring the screen to life.
import { uiReady } from "./ipc";
import "./styles.css";

requestAnimationFrame(() =>
  requestAnimationFrame(() => {
    void uiReady();
    void import("./start");
  }),
);

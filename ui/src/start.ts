// Brings the window to life: hydrates the first screen the page was built with (or mounts the
// app into an empty page, as under `vite dev`), then marks it interactive (`#app[data-interactive]`:
// what the window tests wait for before they click) and tells the shell.
import { hydrate, mount } from "svelte";
import App from "./App.svelte";
import { uiInteractive } from "./ipc";

const target = document.getElementById("app");
if (!target) throw new Error("index.html has no #app element");
if (target.firstChild) hydrate(App, { target });
else mount(App, { target });
target.dataset.interactive = "";
void uiInteractive();

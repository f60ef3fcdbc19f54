// The window's entry point: mounts the app, then tells the shell once the first frame is on
// screen (two animation frames: the first runs before paint, the second after it).
import { mount } from "svelte";
import App from "./App.svelte";
import { uiReady } from "./ipc";
import "./styles.css";

const target = document.getElementById("app");
if (!target) throw new Error("index.html has no #app element");
mount(App, { target });

requestAnimationFrame(() => requestAnimationFrame(() => void uiReady()));

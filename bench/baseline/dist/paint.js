// Reports first paint the way the app does: two animation frames after load.
requestAnimationFrame(() => requestAnimationFrame(() => window.__TAURI_INTERNALS__.invoke("ui_ready")));

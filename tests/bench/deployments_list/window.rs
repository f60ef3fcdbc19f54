//! The bench's steps inside the app window, each one WebDriver script: counting the live events
//! the window receives, declaring deployments through the window's own `declare_deployment`
//! command, tallying the list's sync states through `deployments`, timing one store change to
//! the row that shows it, and timing frames while the list scrolls.

use std::time::Duration;

use anyhow::{Context, bail};
use serde::Deserialize;
use serde_json::{Value, json};
use swdesk_tests::AppWindow;

/// How long one script may run (a chunk of declarations on a loaded machine).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(300);

/// Starts counting `deployment-changed` and `controller-activity` events in the window.
const LISTEN: &str = r#"
const done = arguments[arguments.length - 1];
const internals = window.__TAURI_INTERNALS__;
const counts = (window.__swdeskBench = { changes: 0, steps: 0 });
const listen = (event, handler) =>
  internals.invoke("plugin:event|listen", { event, target: { kind: "Any" }, handler: internals.transformCallback(handler) });
Promise.all([
  listen("deployment-changed", () => counts.changes++),
  listen("controller-activity", () => counts.steps++),
]).then(() => done(null), (error) => done(JSON.stringify(error)));
"#;

/// The event counts so far.
const COUNTS: &str = r#"
const done = arguments[arguments.length - 1];
done(window.__swdeskBench);
"#;

/// Declares each name as an Infra with one staged contract, `parallel` commands at a time;
/// answers the refusals.
const DECLARE: &str = r#"
const [names, parallel, done] = arguments;
const invoke = (command, args) => window.__TAURI_INTERNALS__.invoke(command, args);
const declaration = (name) =>
  JSON.stringify({ kind: "Infra", metadata: { name }, spec: { description: "seeded", contracts: [{ name: "web", state: "staged" }] } });
let next = 0;
const refused = [];
async function worker() {
  while (next < names.length) {
    const name = names[next++];
    try {
      await invoke("declare_deployment", { declaration: declaration(name) });
    } catch (error) {
      refused.push(`${name}: ${JSON.stringify(error)}`);
    }
  }
}
Promise.all(Array.from({ length: parallel }, worker)).then(() => done(refused));
"#;

/// The list's rows counted by sync state, as the `deployments` command answers.
const TALLY: &str = r#"
const done = arguments[arguments.length - 1];
window.__TAURI_INTERNALS__.invoke("deployments").then(
  (rows) => {
    const bySync = {};
    for (const row of rows) bySync[row.sync] = (bySync[row.sync] ?? 0) + 1;
    done({ rows: rows.length, bySync });
  },
  (error) => done({ rows: 0, bySync: {}, error: JSON.stringify(error) }),
);
"#;

/// Re-declares `name` with `description` (one store write that changes the row's visible
/// text) and times, from just before the command, the DOM mutation that shows the text, the
/// second animation frame after it (the first starts the frame that paints the text; the second
/// starts only once that frame is done, so it is when the change is on screen), and the
/// command's answer.
const CHANGE: &str = r#"
const [name, description, done] = arguments;
const list = document.querySelector("[data-testid='deployment-list']");
const row = () => list.querySelector(`[data-testid='deployment-row'][data-name='${name}']`);
const declaration = JSON.stringify({ kind: "Infra", metadata: { name }, spec: { description, contracts: [{ name: "web", state: "staged" }] } });
const sample = { mutation: null, frame: null, answered: null, error: null };
let finished = false;
const finish = (error) => {
  if (finished || (error === undefined && (sample.frame === null || sample.answered === null))) return;
  finished = true;
  observer.disconnect();
  clearTimeout(giveUp);
  done({ ...sample, error: error ?? null });
};
const observer = new MutationObserver(() => {
  if (sample.mutation !== null || !row()?.textContent.includes(description)) return;
  sample.mutation = performance.now() - started;
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      sample.frame = performance.now() - started;
      finish();
    }),
  );
});
observer.observe(list, { subtree: true, childList: true, characterData: true, attributes: true });
const giveUp = setTimeout(() => finish("the row did not show the change within 10 s"), 10000);
const started = performance.now();
window.__TAURI_INTERNALS__.invoke("declare_deployment", { declaration }).then(
  () => {
    sample.answered = performance.now() - started;
    finish();
  },
  (error) => finish(JSON.stringify(error)),
);
"#;

/// Scrolls `list` by `step` pixels every animation frame for `ms` milliseconds, from the top,
/// and answers the time between frames, the rows rendered, and the list's own work in each
/// frame: from the scroll event reaching the document to the rows re-rendered and laid out (a
/// listener added after the window's own, which forces the layout). Shared by the list and the
/// plain reference box.
const SCROLL_FUNCTION: &str = r#"
function scrollFor(list, step, ms, done) {
  const rowsNow = () => list.querySelectorAll("[data-testid='deployment-row']").length;
  list.scrollTop = 0;
  const deltas = [];
  const work = [];
  let eventAt = null;
  const seen = () => (eventAt = performance.now());
  const laidOut = () => {
    void list.firstElementChild?.getBoundingClientRect();
    if (eventAt !== null) work.push(performance.now() - eventAt);
    eventAt = null;
  };
  document.addEventListener("scroll", seen, { capture: true });
  list.addEventListener("scroll", laidOut);
  let rendered = rowsNow();
  let last = null;
  let end = null;
  function frame(at) {
    if (last !== null) deltas.push(at - last);
    last = at;
    end ??= at + ms;
    rendered = Math.max(rendered, rowsNow());
    if (at >= end) {
      document.removeEventListener("scroll", seen, { capture: true });
      list.removeEventListener("scroll", laidOut);
      return done({ deltas, work, rendered, scrolled: list.scrollTop, scrollable: list.scrollHeight - list.clientHeight });
    }
    list.scrollTop = list.scrollTop + step;
    requestAnimationFrame(frame);
  }
  requestAnimationFrame(frame);
}
"#;

/// Scrolls the deployments list (see `SCROLL_FUNCTION`).
const SCROLL: &str = r#"
const [step, ms, done] = arguments;
scrollFor(document.querySelector("[data-testid='deployment-list']"), step, ms, done);
"#;

/// The webview alone, for reference: a plain box of the list's size and place holding `rows`
/// plain rows of the list's height (no framework, no virtualization, nothing of ours), scrolled
/// the same way, then removed.
const SCROLL_PLAIN: &str = r#"
const [rows, rowHeight, step, ms, done] = arguments;
const list = document.querySelector("[data-testid='deployment-list']");
const place = list.getBoundingClientRect();
const box = document.createElement("div");
box.style.cssText = `position:fixed;left:${place.left}px;top:${place.top}px;width:${place.width}px;height:${place.height}px;overflow:auto;background:Canvas;z-index:100`;
for (let i = 0; i < rows; i++) {
  const row = document.createElement("div");
  row.style.height = `${rowHeight}px`;
  row.textContent = `plain row ${i}`;
  box.appendChild(row);
}
document.body.appendChild(box);
scrollFor(box, step, ms, (answer) => {
  box.remove();
  done(answer);
});
"#;

/// How many live events the window received so far.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct EventCounts {
    pub changes: u64,
    pub steps: u64,
}

/// The list's rows by sync state (`inSync`, `publishing`, ...).
#[derive(Debug, Clone, Deserialize)]
pub struct SyncTally {
    pub rows: usize,
    #[serde(rename = "bySync")]
    pub by_sync: serde_json::Map<String, Value>,
    #[serde(default)]
    pub error: Option<String>,
}

impl SyncTally {
    /// How many rows are in sync with their records.
    pub fn in_sync(&self) -> usize {
        self.count("inSync")
    }

    fn count(&self, state: &str) -> usize {
        self.by_sync.get(state).and_then(Value::as_u64).unwrap_or(0) as usize
    }

    /// `4990 inSync, 10 publishing`.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .by_sync
            .iter()
            .map(|(state, count)| format!("{count} {state}"))
            .collect();
        if parts.is_empty() {
            "no rows".to_owned()
        } else {
            parts.join(", ")
        }
    }
}

/// One change timed from just before the command, in milliseconds.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct ChangeSample {
    /// The DOM showed the new text.
    pub mutation: f64,
    /// The animation frame after that mutation (the frame that paints it).
    pub frame: f64,
    /// The command answered.
    pub answered: f64,
}

/// One scroll run: the time between consecutive frames and what the list held.
#[derive(Debug, Clone, Deserialize)]
pub struct ScrollRun {
    pub deltas: Vec<f64>,
    /// Per scroll event: the event reaching the document to the rows re-rendered and laid out.
    pub work: Vec<f64>,
    /// The most rows in the DOM at any frame.
    pub rendered: usize,
    /// How far it scrolled, and how far it could have.
    pub scrolled: f64,
    pub scrollable: f64,
}

async fn script<T: serde::de::DeserializeOwned>(
    window: &AppWindow,
    script: &str,
    args: Vec<Value>,
) -> anyhow::Result<T> {
    let answer = window.run_script(script, args, SCRIPT_TIMEOUT).await?;
    serde_json::from_value(answer.clone())
        .with_context(|| format!("the window answered something unexpected: {answer}"))
}

/// Starts counting the window's live events.
pub async fn listen(window: &AppWindow) -> anyhow::Result<()> {
    let failure: Option<String> = script(window, LISTEN, vec![]).await?;
    match failure {
        Some(error) => bail!("cannot listen to the window's events: {error}"),
        None => Ok(()),
    }
}

/// The live events counted so far.
pub async fn counts(window: &AppWindow) -> anyhow::Result<EventCounts> {
    script(window, COUNTS, vec![]).await
}

/// Declares every name, `parallel` at a time; fails naming the refusals.
pub async fn declare(window: &AppWindow, names: &[String], parallel: usize) -> anyhow::Result<()> {
    let refused: Vec<String> = script(window, DECLARE, vec![json!(names), json!(parallel)]).await?;
    match refused.first() {
        Some(first) => bail!("{} declarations refused, the first: {first}", refused.len()),
        None => Ok(()),
    }
}

/// The list's rows by sync state, now.
pub async fn tally(window: &AppWindow) -> anyhow::Result<SyncTally> {
    script(window, TALLY, vec![]).await
}

/// Changes the row `name` to show `description`, timed.
pub async fn change(
    window: &AppWindow,
    name: &str,
    description: &str,
) -> anyhow::Result<ChangeSample> {
    let answer: Value = script(window, CHANGE, vec![json!(name), json!(description)]).await?;
    if let Some(error) = answer["error"].as_str() {
        bail!("changing {name}: {error}");
    }
    Ok(serde_json::from_value(answer)?)
}

/// Scrolls the list by `step` pixels a frame for `duration`.
pub async fn scroll(
    window: &AppWindow,
    step: u32,
    duration: Duration,
) -> anyhow::Result<ScrollRun> {
    let millis = duration.as_millis() as u64;
    let body = format!("{SCROLL_FUNCTION}{SCROLL}");
    script(window, &body, vec![json!(step), json!(millis)]).await
}

/// Scrolls a plain box of `rows` rows, in the list's place, the same way (the webview alone).
pub async fn scroll_plain(
    window: &AppWindow,
    rows: usize,
    row_height: u32,
    step: u32,
    duration: Duration,
) -> anyhow::Result<ScrollRun> {
    let millis = duration.as_millis() as u64;
    let body = format!("{SCROLL_FUNCTION}{SCROLL_PLAIN}");
    let args = vec![json!(rows), json!(row_height), json!(step), json!(millis)];
    script(window, &body, args).await
}

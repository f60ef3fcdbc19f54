//! Layout that holds, measured in the real window: element rectangles read through WebDriver.
//! Nothing shown may reach past the window's right edge (unless a scrolling or clipping box
//! holds it), and within the rows that carry controls (toolbars, action rows, a contract's head,
//! list rows, dialogs' action rows, the Activity's steps and group headings) no two shown
//! children may overlap. Problems are kept by
//! state, so one run names all of them.

use std::time::Duration;

use crate::AppWindow;

/// Answers the layout problems of the page as it stands, each in words.
const MEASURE: &str = r#"
const done = arguments[arguments.length - 1];
const width = document.documentElement.clientWidth;
const problems = [];
const shown = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== "hidden"; };
const name = (e) => e.tagName.toLowerCase() + (e.dataset.testid ? `[data-testid=${e.dataset.testid}]` : "") + (e.dataset.action ? `[data-action=${e.dataset.action}]` : "") + (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).filter((c) => !c.startsWith("svelte-")).join(".") : "");
const held = (e) => {
  for (let up = e.parentElement; up && up !== document.body; up = up.parentElement) {
    const style = getComputedStyle(up);
    if (style.overflowX !== "visible" || style.position === "fixed") return true;
  }
  return false;
};
for (const e of document.body.querySelectorAll("*")) {
  if (!shown(e) || e.closest(".visually-hidden")) continue;
  const r = e.getBoundingClientRect();
  if (r.right > width + 1 && !held(e)) problems.push(`${name(e)} reaches ${Math.round(r.right)} px, past the window's ${width} px`);
}
const rows = ".toolbar, .row-actions, .contract-head, .footer, .actions, .badges, [data-testid=deployment-row], .side-panel > header, .section-header, .sidebar, [data-testid=activity-step], [data-testid=activity-group] > h2, [data-testid=contract-lead], [data-testid=cluster-row], [data-testid=cluster-member], [data-node-contract], [data-testid=cluster-nodes] > li, .short-id, .person";
for (const row of document.querySelectorAll(rows)) {
  if (!shown(row)) continue;
  const kids = Array.from(row.children).filter(shown);
  for (let i = 0; i < kids.length; i++) for (let j = i + 1; j < kids.length; j++) {
    const a = kids[i].getBoundingClientRect(), b = kids[j].getBoundingClientRect();
    const x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    const y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (x > 1 && y > 1) problems.push(`in ${name(row)}, ${name(kids[i])} and ${name(kids[j])} overlap by ${Math.round(x)}×${Math.round(y)} px`);
  }
}
done({ width, problems: Array.from(new Set(problems)).slice(0, 40) });
"#;

/// The layout problems of the states measured so far.
#[derive(Debug, Default)]
pub struct LayoutProblems {
    found: Vec<String>,
    states: usize,
}

impl LayoutProblems {
    /// Fails naming every problem, by state, when there is any.
    pub fn assert_none(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.found.is_empty(),
            "{} layout problems in {} states:\n  {}",
            self.found.len(),
            self.states,
            self.found.join("\n  ")
        );
        Ok(())
    }

    /// How many states were measured.
    pub fn states(&self) -> usize {
        self.states
    }
}

/// The window sizes the layout must hold at.
pub const SIZES: [(u32, u32); 2] = [(1024, 700), (1440, 900)];

impl AppWindow {
    /// Resizes the window and waits until the page has its new width.
    pub async fn resize_to(&self, width: u32, height: u32) -> anyhow::Result<()> {
        crate::desktop::resize_window("Socialweb Desk", width, height)?;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let seen = self
                .run_script(
                    "arguments[0](window.innerWidth)",
                    vec![],
                    Duration::from_secs(5),
                )
                .await?;
            if seen.as_u64() == Some(u64::from(width)) {
                // Two frames for the layout to settle.
                tokio::time::sleep(Duration::from_millis(300)).await;
                return Ok(());
            }
            anyhow::ensure!(
                std::time::Instant::now() < deadline,
                "the page never became {width} px wide (it is {seen})"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Measures the state at each of [`SIZES`] ([`Self::check_layout`]).
    pub async fn check_layout_at_each_size(
        &mut self,
        state: &str,
        problems: &mut LayoutProblems,
    ) -> anyhow::Result<()> {
        for (width, height) in SIZES {
            self.resize_to(width, height).await?;
            self.check_layout(state, problems).await?;
        }
        Ok(())
    }

    /// Measures the window as it stands, keeping its problems under `state`, with a screenshot.
    pub async fn check_layout(
        &mut self,
        state: &str,
        problems: &mut LayoutProblems,
    ) -> anyhow::Result<()> {
        let answer = self
            .run_script(MEASURE, vec![], Duration::from_secs(20))
            .await?;
        let width = answer["width"].as_u64().unwrap_or_default();
        self.screenshot(&format!("{state}-{width}").replace(' ', "-"))
            .await?;
        for problem in answer["problems"].as_array().into_iter().flatten() {
            problems.found.push(format!(
                "{state} at {width} px: {}",
                problem.as_str().unwrap_or_default()
            ));
        }
        problems.states += 1;
        Ok(())
    }
}

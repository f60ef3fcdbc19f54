//! Accessibility in the real window: axe-core (the UI's pinned npm package,
//! `ui/node_modules/axe-core`) injected through WebDriver and run on the page as it stands, once
//! in light and once in dark. Dark is the window's own `prefers-color-scheme: dark` rules
//! applied as the system's preference would apply them (copied to the end of their style sheet
//! through the CSS object model, which the window's content security policy allows), then taken
//! away again. The serious and critical findings of every state are kept by rule, so one run
//! names all of them; [`AxeFindings::assert_none`] fails printing them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use serde::Deserialize;

use crate::AppWindow;

/// How long one axe run may take in a loaded window.
const AXE_TIMEOUT: Duration = Duration::from_secs(60);

/// Answers whether `window.axe` is defined; run after axe's source, in the same script (the
/// window's policy forbids `eval`, not what WebDriver runs).
const INJECTED: &str = "\n;arguments[arguments.length - 1](typeof window.axe);";

/// Runs axe on the whole document; answers its serious and critical violations.
const RUN: &str = r#"
const done = arguments[arguments.length - 1];
window.axe.run(document, { resultTypes: ["violations"] }).then(
  (results) => done(results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({
      rule: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target.join(" "), summary: (n.failureSummary || "").replace(/\s+/g, " ") })),
    }))),
  (error) => done({ error: String(error) }),
);
"#;

/// Applies (`true`) or takes away (`false`) the page's dark rules; answers how many apply.
const DARK: &str = r#"
const [on, done] = arguments;
const added = window.__e2eDark || [];
for (const { sheet, count } of added.reverse()) {
  for (let i = 0; i < count; i++) sheet.deleteRule(sheet.cssRules.length - 1);
}
window.__e2eDark = [];
let total = 0;
if (on) {
  for (const sheet of Array.from(document.styleSheets)) {
    let rules;
    try { rules = Array.from(sheet.cssRules); } catch { continue; }
    const dark = rules
      .filter((rule) => rule instanceof CSSMediaRule && /prefers-color-scheme:\s*dark/.test(rule.media.mediaText))
      .flatMap((rule) => Array.from(rule.cssRules).map((inner) => inner.cssText));
    for (const text of dark) sheet.insertRule(text, sheet.cssRules.length);
    if (dark.length > 0) window.__e2eDark.push({ sheet, count: dark.length });
    total += dark.length;
  }
}
document.documentElement.style.colorScheme = on ? "dark" : "";
requestAnimationFrame(() => requestAnimationFrame(() => done(total)));
"#;

#[derive(Debug, Deserialize)]
struct Violation {
    rule: String,
    impact: String,
    help: String,
    nodes: Vec<Node>,
}

#[derive(Debug, Deserialize)]
struct Node {
    target: String,
    summary: String,
}

/// The serious and critical findings of the states checked so far, by rule.
#[derive(Debug, Default)]
pub struct AxeFindings {
    by_rule: BTreeMap<String, Vec<String>>,
    states: Vec<String>,
}

impl AxeFindings {
    /// How many findings (elements failing a rule in a state) were kept.
    pub fn count(&self) -> usize {
        self.by_rule.values().map(Vec::len).sum()
    }

    /// Whether any element failed `rule` in a state checked.
    pub fn found(&self, rule: &str) -> bool {
        self.by_rule.contains_key(rule)
    }

    /// The states checked, in order (`<state> (light)`, `<state> (dark)`).
    pub fn states(&self) -> &[String] {
        &self.states
    }

    /// Fails naming every finding, grouped by rule, when there is any.
    pub fn assert_none(&self) -> anyhow::Result<()> {
        if self.by_rule.is_empty() {
            return Ok(());
        }
        let mut report = format!(
            "{} serious or critical axe findings in {} states:\n",
            self.count(),
            self.states.len()
        );
        for (rule, found) in &self.by_rule {
            report.push_str(&format!("\n{rule} ({}):\n", found.len()));
            for line in found {
                report.push_str(&format!("  {line}\n"));
            }
        }
        anyhow::bail!(report)
    }
}

/// The axe-core script the UI's npm packages hold.
fn axe_source() -> anyhow::Result<String> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ui/node_modules/axe-core/axe.min.js");
    std::fs::read_to_string(&path).with_context(|| {
        format!(
            "cannot read {} (the UI's npm packages: `cargo xtask test` installs them)",
            path.display()
        )
    })
}

impl AppWindow {
    /// Runs axe on the window as it stands, in light then in dark, keeping its serious and
    /// critical findings in `findings` under `state`, with a screenshot of each.
    pub async fn check_accessibility(
        &mut self,
        state: &str,
        findings: &mut AxeFindings,
    ) -> anyhow::Result<()> {
        let loaded = self
            .run_script(
                "arguments[arguments.length - 1](typeof window.axe);",
                vec![],
                AXE_TIMEOUT,
            )
            .await?;
        let injected = if loaded == "object" {
            loaded
        } else {
            let script = format!("{}{INJECTED}", axe_source()?);
            self.run_script(&script, vec![], AXE_TIMEOUT).await?
        };
        anyhow::ensure!(injected == "object", "axe-core did not load: {injected}");
        for dark in [false, true] {
            let applied = self
                .run_script(DARK, vec![dark.into()], AXE_TIMEOUT)
                .await?;
            anyhow::ensure!(
                !dark || applied.as_u64() > Some(0),
                "the window has no dark rules to apply: {applied}"
            );
            let scheme = if dark { "dark" } else { "light" };
            let named = format!("{state} ({scheme})");
            self.screenshot(&format!("{state}-{scheme}").replace(' ', "-"))
                .await?;
            let answer = self.run_script(RUN, vec![], AXE_TIMEOUT).await?;
            let violations: Vec<Violation> = serde_json::from_value(answer.clone())
                .with_context(|| format!("axe failed in {named}: {answer}"))?;
            for violation in violations {
                let found = findings.by_rule.entry(violation.rule).or_default();
                for node in violation.nodes {
                    found.push(format!(
                        "{named} [{}] {}: {} — {}",
                        violation.impact, violation.help, node.target, node.summary
                    ));
                }
            }
            findings.states.push(named);
        }
        self.run_script(DARK, vec![false.into()], AXE_TIMEOUT)
            .await?;
        Ok(())
    }
}

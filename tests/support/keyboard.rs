//! The keyboard alone: an [`AppWindow`] presses chords (`"Tab"`, `"Shift+Tab"`, `"Ctrl+N"`) and
//! types text through WebDriver key actions sent to wherever the focus is (no element is
//! addressed, no pointer moves), counts every key so pressed, and tells what holds the focus.

use std::sync::atomic::Ordering;

use anyhow::Context;
use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::key::Key;

use crate::AppWindow;

/// Describes the focused element: its tag, test id, action, contract and label.
const FOCUSED: &str = r#"
const done = arguments[arguments.length - 1];
const e = document.activeElement;
if (!e || e === document.body) return done("body");
const attr = (name) => e.getAttribute(name) ? `[${name}=${e.getAttribute(name)}]` : "";
const card = e.closest("[data-contract]");
done(`${e.tagName.toLowerCase()}${attr("data-testid")}${attr("data-action")}${attr("data-name")}${attr("id")}`
  + (card ? ` in [data-contract=${card.getAttribute("data-contract")}]` : "")
  + ` "${(e.getAttribute("aria-label") || e.textContent || "").trim().slice(0, 40)}"`);
"#;

fn key_of(name: &str) -> anyhow::Result<char> {
    let key = match name {
        "Tab" => Key::Tab,
        "Enter" => Key::Enter,
        "Escape" => Key::Escape,
        "Space" => Key::Space,
        "ArrowDown" => Key::Down,
        "ArrowUp" => Key::Up,
        "Ctrl" => Key::Control,
        "Shift" => Key::Shift,
        "Alt" => Key::Alt,
        "Backspace" => Key::Backspace,
        _ => {
            let mut chars = name.chars();
            let only = chars.next().context("an empty key name")?;
            anyhow::ensure!(chars.next().is_none(), "unknown key {name:?}");
            return Ok(only.to_ascii_lowercase());
        }
    };
    Ok(char::from(key))
}

impl AppWindow {
    /// How many keys (each chord counts one, each typed character one) [`Self::press`] and
    /// [`Self::type_keys`] pressed in this window so far.
    pub fn keys_pressed(&self) -> usize {
        self.keys_pressed.load(Ordering::Relaxed)
    }

    /// Presses the chord `chord` (`"Ctrl+Shift+R"`: modifiers then the key) once.
    pub async fn press(&self, chord: &str) -> anyhow::Result<()> {
        let keys = chord
            .split('+')
            .map(key_of)
            .collect::<anyhow::Result<Vec<char>>>()?;
        let mut actions = KeyActions::new("keyboard".to_owned());
        for key in &keys {
            actions = actions.then(KeyAction::Down { value: *key });
        }
        for key in keys.iter().rev() {
            actions = actions.then(KeyAction::Up { value: *key });
        }
        self.client.perform_actions(actions).await?;
        self.client.release_actions().await?;
        self.keys_pressed.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Presses `chord` `times` times.
    pub async fn press_times(&self, chord: &str, times: usize) -> anyhow::Result<()> {
        for _ in 0..times {
            self.press(chord).await?;
        }
        Ok(())
    }

    /// Types `text` where the focus is, a key for each character.
    pub async fn type_keys(&self, text: &str) -> anyhow::Result<()> {
        let mut actions = KeyActions::new("keyboard".to_owned());
        for character in text.chars() {
            actions = actions
                .then(KeyAction::Down { value: character })
                .then(KeyAction::Up { value: character });
        }
        self.client.perform_actions(actions).await?;
        self.client.release_actions().await?;
        self.keys_pressed
            .fetch_add(text.chars().count(), Ordering::Relaxed);
        Ok(())
    }

    /// What holds the focus, described (`button[data-action=request] in [data-contract=api]
    /// "Request"`), or `body`.
    pub async fn focused(&self) -> anyhow::Result<String> {
        let answer = self
            .run_script(FOCUSED, vec![], std::time::Duration::from_secs(5))
            .await?;
        Ok(answer.as_str().unwrap_or_default().to_owned())
    }

    /// Whether the focus is inside the element matching `css`.
    pub async fn focus_within(&self, css: &str) -> anyhow::Result<bool> {
        let answer = self.run_script(
                "const [css, done] = arguments; const root = document.querySelector(css); done(!!root && root.contains(document.activeElement));",
                vec![css.into()],
                std::time::Duration::from_secs(5),
            )
            .await?;
        Ok(answer == true)
    }

    /// Presses Tab until the focus is on an element whose description contains `wanted`, at
    /// most `limit` times; answers how many Tabs it took.
    pub async fn tab_to(&self, wanted: &str, limit: usize) -> anyhow::Result<usize> {
        for tabs in 1..=limit {
            self.press("Tab").await?;
            if self.focused().await?.contains(wanted) {
                return Ok(tabs);
            }
        }
        anyhow::bail!(
            "{limit} Tabs never reached {wanted:?}; the focus is on {}",
            self.focused().await?
        )
    }

    /// Waits until the focus is on an element whose description contains `wanted`.
    pub async fn wait_for_focus(&self, wanted: &str) -> anyhow::Result<String> {
        let deadline = std::time::Instant::now() + crate::STEP_TIMEOUT;
        loop {
            let focused = self.focused().await?;
            if focused.contains(wanted) {
                return Ok(focused);
            }
            anyhow::ensure!(
                std::time::Instant::now() < deadline,
                "the focus never reached {wanted:?}; it is on {focused}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
}

//! Whether the desktop opens the app's sign-in link ([`APP_LINK_SCHEME`]) with this very
//! program: the installed package's desktop entry registers the scheme, and a sign-in may then
//! return through the link instead of a loopback port. Asked as the desktop answers it: the
//! default handler of `x-scheme-handler/<scheme>` (`xdg-mime`), whose desktop entry's `Exec`
//! must start this executable. A source build, or a desktop that hands the link to another
//! copy of the app, signs in through loopback.

use std::path::{Path, PathBuf};
use std::process::Command;

pub use swdesk_atproto::oauth::{APP_LINK_CALLBACK, APP_LINK_SCHEME, AppLinkError, AppLinks};

/// The largest desktop entry read.
const MAX_ENTRY: u64 = 64 * 1024;

/// Whether the desktop's handler of the app's link is this executable.
pub fn handed_to_this_app() -> bool {
    let Ok(this) = std::env::current_exe().and_then(std::fs::canonicalize) else {
        return false;
    };
    let handler = default_handler().and_then(|entry| entry_program(&entry));
    let verdict = handler.as_deref() == Some(this.as_path());
    tracing::info!(
        handler = handler.as_ref().map(|path| path.display().to_string()),
        this_app = verdict,
        "who opens the app's sign-in link"
    );
    verdict
}

/// The desktop entry `xdg-mime` names as the link's default handler.
fn default_handler() -> Option<PathBuf> {
    let mime = format!("x-scheme-handler/{APP_LINK_SCHEME}");
    let answer = Command::new("xdg-mime")
        .args(["query", "default", &mime])
        .output()
        .ok()
        .filter(|answer| answer.status.success())?;
    let name = String::from_utf8(answer.stdout).ok()?;
    let name = name.trim();
    let plain = name.ends_with(".desktop") && !name.contains('/') && !name.starts_with('.');
    plain.then(|| find_entry(name)).flatten()
}

/// `name` in the desktop's application folders, the owner's first.
fn find_entry(name: &str) -> Option<PathBuf> {
    data_dirs()
        .into_iter()
        .map(|dir| dir.join("applications").join(name))
        .find(|path| path.is_file())
}

/// `$XDG_DATA_HOME` (or `~/.local/share`), then `$XDG_DATA_DIRS` (or `/usr/local/share` and
/// `/usr/share`).
fn data_dirs() -> Vec<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|value| !value.is_empty());
    let home = var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|home| Path::new(&home).join(".local/share")));
    let system = var("XDG_DATA_DIRS")
        .map(|dirs| std::env::split_paths(&dirs).collect())
        .unwrap_or_else(|| vec!["/usr/local/share".into(), "/usr/share".into()]);
    home.into_iter().chain(system).collect()
}

/// The program an entry's `Exec` line starts, found on `PATH` when it names no folder.
fn entry_program(entry: &Path) -> Option<PathBuf> {
    use std::io::Read as _;
    let mut text = String::new();
    std::fs::File::open(entry)
        .ok()?
        .take(MAX_ENTRY)
        .read_to_string(&mut text)
        .ok()?;
    let program = exec_program(&text)?;
    let path = if program.contains('/') {
        PathBuf::from(program)
    } else {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path)
            .map(|dir| dir.join(&program))
            .find(|candidate| candidate.is_file())?
    };
    std::fs::canonicalize(path).ok()
}

/// The first word of the `Exec` key of the `[Desktop Entry]` group (quotes taken off).
fn exec_program(entry: &str) -> Option<String> {
    let mut in_main_group = false;
    for line in entry.lines().map(str::trim) {
        if line.starts_with('[') {
            in_main_group = line == "[Desktop Entry]";
        } else if let Some(command) = line.strip_prefix("Exec=").filter(|_| in_main_group) {
            let command = command.trim_start();
            return match command.strip_prefix('"') {
                Some(quoted) => quoted.split('"').next().map(str::to_owned),
                None => command.split_whitespace().next().map(str::to_owned),
            };
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_is_the_first_word_of_the_main_groups_exec() {
        let entry = "[Desktop Entry]\nName=Socialweb Desk\nExec=swdesk %u\n\
                     [Desktop Action new]\nExec=other\n";
        assert_eq!(exec_program(entry).as_deref(), Some("swdesk"));
        let quoted = "[Desktop Entry]\nExec=\"/opt/social web/swdesk\" %u\n";
        assert_eq!(
            exec_program(quoted).as_deref(),
            Some("/opt/social web/swdesk")
        );
        let action_only = "[Desktop Action new]\nExec=other\n[Desktop Entry]\nName=x\n";
        assert_eq!(exec_program(action_only), None);
    }
}

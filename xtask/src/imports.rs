//! Who imports whom: the module graph of every crate in the workspace, read from its sources,
//! and the two rules `cargo xtask test` holds it to. No two files import each other (a file
//! may use its parent module, which declares it, but a module never uses a file that uses it
//! back: the shared piece moves down instead), and the api reaches the controller only through
//! `Engine` and the core's types, never `swdesk_controller::kinds`.
//!
//! A file's imports are its `use` trees and every `crate::…`/`super::…` path in its code;
//! comments and the `#[cfg(test)] mod tests` block at the end are left out. A path is resolved
//! to the longest module of the crate it names, so `crate::a::b::Item` is an import of `a::b`
//! when that file exists and of `a` otherwise.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::paths::Paths;

/// A module, as the segments of its path below the crate root (empty for the root).
type Module = Vec<String>;

/// The name the api must never import.
const CONTROLLER_KINDS: &str = "swdesk_controller::kinds";

/// Fails naming every pair of files that import each other, and every api file that imports
/// the controller's kinds.
pub fn check(paths: &Paths) -> anyhow::Result<()> {
    let mut problems = Vec::new();
    for crate_dir in crate_dirs(&paths.root) {
        let files = source_files(&crate_dir.join("src"));
        let name = crate_dir.strip_prefix(&paths.root).unwrap_or(&crate_dir);
        for (a, b) in circles(&files) {
            problems.push(format!(
                "{}: {} and {} import each other",
                name.display(),
                display(&a),
                display(&b)
            ));
        }
    }
    for (module, text) in source_files(&paths.root.join("crates/api/src")) {
        if without_comments_and_tests(&text.text).contains(CONTROLLER_KINDS) {
            problems.push(format!(
                "the api's {} imports {CONTROLLER_KINDS} (use Engine and the core's types)",
                display(&module)
            ));
        }
    }
    anyhow::ensure!(problems.is_empty(), "{}", problems.join("; "));
    Ok(())
}

/// One source file: its text and whether it is a directory module (`mod.rs`, `lib.rs`,
/// `main.rs`), against which `super::` is resolved one level higher.
pub struct Source {
    text: String,
    directory: bool,
}

/// Every crate of the workspace that has sources.
fn crate_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![
        root.join("src-tauri"),
        root.join("xtask"),
        root.join("tests"),
    ];
    for parent in ["crates", "sandbox"] {
        if let Ok(entries) = std::fs::read_dir(root.join(parent)) {
            dirs.extend(entries.flatten().map(|entry| entry.path()));
        }
    }
    dirs.retain(|dir| dir.join("src").is_dir());
    dirs.sort();
    dirs
}

/// Every `.rs` file under `src`, by module.
fn source_files(src: &Path) -> BTreeMap<Module, Source> {
    let mut files = BTreeMap::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.flatten().map(|entry| entry.path()) {
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs")
                && let (Some(module), Ok(text)) =
                    (module_of(src, &path), std::fs::read_to_string(&path))
            {
                let name = path.file_stem().and_then(|stem| stem.to_str());
                let directory = matches!(name, Some("mod" | "lib" | "main"));
                files.insert(module, Source { text, directory });
            }
        }
    }
    files
}

/// The module a file under `src` is: `a/b.rs` and `a/b/mod.rs` are `a::b`, `lib.rs` the root.
fn module_of(src: &Path, file: &Path) -> Option<Module> {
    let relative = file.strip_prefix(src).ok()?.with_extension("");
    let mut module: Module = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if module.len() == 1 && matches!(module[0].as_str(), "lib" | "main") {
        module.clear();
    } else if module.last().is_some_and(|last| last == "mod") {
        module.pop();
    }
    Some(module)
}

/// Every pair of modules that import each other, each pair once.
pub fn circles(files: &BTreeMap<Module, Source>) -> Vec<(Module, Module)> {
    let edges: BTreeMap<&Module, BTreeSet<Module>> = files
        .iter()
        .map(|(module, source)| (module, imports(module, source, files)))
        .collect();
    let mut found = Vec::new();
    for (a, targets) in &edges {
        for b in targets.iter().filter(|b| *a < *b) {
            if edges.get(b).is_some_and(|back| back.contains(*a)) {
                found.push(((*a).clone(), b.clone()));
            }
        }
    }
    found
}

/// The modules of the crate that `module` imports (its ancestors and itself left out).
fn imports(module: &Module, source: &Source, files: &BTreeMap<Module, Source>) -> BTreeSet<Module> {
    let text = without_comments_and_tests(&source.text);
    let base = if source.directory {
        module.clone()
    } else {
        module[..module.len().saturating_sub(1)].to_vec()
    };
    let mut found = BTreeSet::new();
    for path in use_paths(&text).into_iter().chain(inline_paths(&text)) {
        let Some(full) = resolve(&path, &base) else {
            continue;
        };
        let Some(target) = (0..=full.len())
            .rev()
            .map(|len| full[..len].to_vec())
            .find(|prefix| files.contains_key(prefix))
        else {
            continue;
        };
        if !module.starts_with(&target) {
            found.insert(target);
        }
    }
    found
}

/// `path` as segments below the crate root, when it starts at `crate`, `self` or `super`
/// (`base` being the module `self` means).
fn resolve(path: &str, base: &[String]) -> Option<Module> {
    let mut segments = path.split("::").filter(|segment| !segment.is_empty());
    let mut resolved: Module = match segments.next()? {
        "crate" => Vec::new(),
        "self" => base.to_vec(),
        "super" => base[..base.len().saturating_sub(1)].to_vec(),
        _ => return None,
    };
    for segment in segments {
        match segment {
            "super" => {
                resolved.pop();
            }
            "self" => {}
            name => resolved.push(name.to_owned()),
        }
    }
    Some(resolved)
}

/// The text without `//` comments and without the trailing `#[cfg(test)] mod tests` block.
fn without_comments_and_tests(text: &str) -> String {
    let code: Vec<&str> = text
        .lines()
        .map(|line| line.find("//").map_or(line, |at| &line[..at]))
        .collect();
    let code = code.join("\n");
    match code.find("#[cfg(test)]\nmod tests") {
        Some(at) => code[..at].to_owned(),
        None => code,
    }
}

/// Every path a `use` item names (one that starts a line, `pub` or not), braces expanded:
/// `use a::{b, c::{d, e}};` gives `a::b`, `a::c::d` and `a::c::e`.
fn use_paths(text: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(start) = use_item_start(line.trim_start()) else {
            continue;
        };
        let mut tree = start.to_owned();
        while !tree.contains(';') {
            let Some(next) = lines.next() else { break };
            tree.push_str(next);
        }
        let end = tree.find(';').unwrap_or(tree.len());
        paths.extend(expand(&without_renames(&tree[..end])));
    }
    paths
}

/// A use tree without whitespace and without its `as` renames (`a as b` is `a`).
fn without_renames(tree: &str) -> String {
    let mut compact = String::new();
    let mut tokens = tree.split_whitespace();
    while let Some(token) = tokens.next() {
        if token == "as" {
            let renamed = tokens.next().unwrap_or_default();
            compact.extend(renamed.chars().filter(|c| matches!(c, ',' | '{' | '}')));
        } else {
            compact.push_str(token);
        }
    }
    compact
}

/// What follows `use` when `line` is a `use` item.
fn use_item_start(line: &str) -> Option<&str> {
    let line = match line.strip_prefix("pub") {
        Some(rest) if rest.starts_with('(') => rest.split_once(')')?.1.trim_start(),
        Some(rest) => rest.trim_start(),
        None => line,
    };
    line.strip_prefix("use ")
}

/// Where `word` starts in `text` at the start of a word, if anywhere.
fn find_word(text: &str, word: &str) -> Option<usize> {
    text.match_indices(word).map(|(at, _)| at).find(|at| {
        text[..*at]
            .chars()
            .next_back()
            .is_none_or(|before| !before.is_alphanumeric() && before != '_')
    })
}

/// A use tree (without whitespace or renames) as the paths it names.
fn expand(tree: &str) -> Vec<String> {
    let Some(open) = tree.find('{') else {
        return vec![tree.to_owned()];
    };
    let prefix = &tree[..open];
    let inside = &tree[open + 1..];
    let inside = match inside.rfind('}') {
        Some(close) => &inside[..close],
        None => inside,
    };
    split_top_level(inside)
        .into_iter()
        .flat_map(expand)
        .map(|inner| format!("{prefix}{inner}"))
        .collect()
}

/// The comma-separated parts of a brace group's inside, nested groups kept whole.
fn split_top_level(inside: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0_u32, 0);
    for (at, character) in inside.char_indices() {
        match character {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&inside[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&inside[start..]);
    parts.retain(|part| !part.is_empty());
    parts
}

/// Every `crate::…` and `super::…` path written in the code itself.
fn inline_paths(text: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for root in ["crate::", "super::"] {
        let mut rest = text;
        while let Some(at) = find_word(rest, root) {
            let path: String = rest[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            rest = &rest[at + root.len()..];
            paths.push(path);
        }
    }
    paths
}

fn display(module: &Module) -> String {
    if module.is_empty() {
        "the crate root".to_owned()
    } else {
        module.join("::")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crate_of(files: &[(&str, &str)]) -> BTreeMap<Module, Source> {
        files
            .iter()
            .map(|(path, text)| {
                let src = Path::new("src");
                let module = module_of(src, &src.join(path)).unwrap();
                let directory = path.ends_with("mod.rs") || *path == "lib.rs";
                let text = (*text).to_owned();
                (module, Source { text, directory })
            })
            .collect()
    }

    #[test]
    fn two_files_that_import_each_other_are_a_circle_and_a_parent_is_not() {
        let files = crate_of(&[
            ("lib.rs", "mod a;\nmod b;\nmod c;\npub use a::Thing;"),
            ("a.rs", "use crate::{b::{self, B}, c};\n// crate::c"),
            ("b.rs", "pub fn f() { super::a::g() }"),
            ("c/mod.rs", "mod d;\nuse self::d::D;"),
            (
                "c/d.rs",
                "use super::C;\nuse crate::c::{Other as O, basic};",
            ),
        ]);
        assert_eq!(
            circles(&files),
            vec![(vec!["a".to_owned()], vec!["b".to_owned()])]
        );
    }

    #[test]
    fn comments_and_the_test_block_import_nothing() {
        let files = crate_of(&[
            ("a.rs", "//! See [`crate::b`].\nfn f() {}"),
            (
                "b.rs",
                "use crate::a;\n#[cfg(test)]\nmod tests {\n    use crate::a;\n}",
            ),
        ]);
        assert!(circles(&files).is_empty());
    }
}

//! Who imports whom: the module graph of every crate in the workspace, read from its sources,
//! and the two rules `cargo xtask test` holds it to. No circle of imports between the files of
//! a crate, of any length (a file may use its parent module, which declares it, but no file
//! reaches back to itself through the files it uses: the shared piece moves down instead), and
//! the api reaches the controller only through `Engine` and the core's types, never
//! `swdesk_controller::kinds`.
//!
//! A file's imports are its `use` trees (braces expanded, renames dropped) and every
//! `crate::…`/`self::…`/`super::…` path in its code; comments and `#[cfg(test)] mod … { … }`
//! blocks are left out. Paths resolve as rustc resolves them from the file's own module:
//! `self` is that module (`a/b.rs` and `a/b/mod.rs` are both `a::b`), each `super` one level
//! up from it, `crate` the root, and a `use` path that starts with the name of one of the
//! module's own child files starts at the module. A resolved path is an import of the longest
//! module of the crate it names, so `crate::a::b::Item` is an import of `a::b` when that file
//! exists and of `a` otherwise; an import of the file's own ancestor or of itself is no edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::cycles::{self, Graph};
use crate::paths::Paths;

/// A module, as the segments of its path below the crate root (empty for the root).
type Module = Vec<String>;

/// The name the api must never import.
const CONTROLLER_KINDS: &str = "swdesk_controller::kinds";

/// Fails naming every circle of imports, as the path of files it runs through, and every api
/// file that imports the controller's kinds.
pub fn check(paths: &Paths) -> anyhow::Result<()> {
    let mut problems = Vec::new();
    for crate_dir in crate_dirs(&paths.root) {
        let src = crate_dir.join("src");
        let files = source_files(&src);
        let src = src.strip_prefix(&paths.root).unwrap_or(&src);
        for circle in circles(&files) {
            problems.push(format!("circle: {}", path_of_files(src, &circle, &files)));
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
    anyhow::ensure!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
    Ok(())
}

/// A circle as the files it runs through, back to its first: `src/a.rs → src/b.rs → src/a.rs`.
fn path_of_files(src: &Path, circle: &[Module], files: &BTreeMap<Module, Source>) -> String {
    let file = |module: &Module| src.join(&files[module].file).display().to_string();
    let mut steps: Vec<String> = circle.iter().map(file).collect();
    steps.extend(circle.first().map(file));
    steps.join(" → ")
}

/// One source file: its path below `src` and its text.
pub struct Source {
    file: PathBuf,
    text: String,
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
                let file = path.strip_prefix(src).unwrap_or(&path).to_path_buf();
                files.insert(module, Source { file, text });
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

/// Every circle of imports between the files of one crate, of any length, each as the modules
/// it runs through (the first imported by the last); every file of a tangle is on one.
pub fn circles(files: &BTreeMap<Module, Source>) -> Vec<Vec<Module>> {
    let graph: Graph<Module> = files
        .iter()
        .map(|(module, source)| (module.clone(), imports(module, &source.text, files)))
        .collect();
    cycles::cycles(&graph)
}

/// The modules of the crate that `module` imports (its ancestors and itself left out).
fn imports(module: &Module, text: &str, files: &BTreeMap<Module, Source>) -> BTreeSet<Module> {
    let code = without_comments_and_tests(text);
    let child_file =
        |name: &str| files.contains_key(&[module.as_slice(), &[name.to_owned()]].concat());
    let uses = use_paths(&code)
        .into_iter()
        .map(|path| match path.split("::").next() {
            Some(first) if child_file(first) => format!("self::{path}"),
            _ => path,
        });
    uses.chain(inline_paths(&code))
        .filter_map(|path| resolve(&path, module))
        .filter_map(|full| longest_module(&full, files))
        .filter(|target| !module.starts_with(target))
        .collect()
}

/// The longest module of the crate that `full` names (the crate root at least).
fn longest_module(full: &[String], files: &BTreeMap<Module, Source>) -> Option<Module> {
    (0..=full.len())
        .rev()
        .map(|len| full[..len].to_vec())
        .find(|prefix| files.contains_key(prefix))
}

/// `path` as segments below the crate root, when it starts at `crate`, `self` or `super`,
/// written in the file of module `own` (which `self` names, and `super` the parent of).
fn resolve(path: &str, own: &[String]) -> Option<Module> {
    let mut segments = path.split("::").filter(|segment| !segment.is_empty());
    let mut resolved: Module = match segments.next()? {
        "crate" => Vec::new(),
        "self" => own.to_vec(),
        "super" => own[..own.len().saturating_sub(1)].to_vec(),
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

/// The text without `//` comments and without its `#[cfg(test)] mod … { … }` blocks.
fn without_comments_and_tests(text: &str) -> String {
    let code: Vec<&str> = text
        .lines()
        .map(|line| line.find("//").map_or(line, |at| &line[..at]))
        .collect();
    let mut code = code.join("\n");
    while let Some(at) = code.find("#[cfg(test)]\nmod ") {
        let end = item_end(&code, at).unwrap_or(code.len());
        code.replace_range(at..end, "");
    }
    code
}

/// Where the item from `from` ends: past its `;` (`mod a;`) or past the `}` that closes its
/// first block; `None` when its braces never close.
fn item_end(code: &str, from: usize) -> Option<usize> {
    let mut depth = 0_u32;
    for (at, character) in code[from..].char_indices() {
        match character {
            ';' if depth == 0 => return Some(from + at + 1),
            '{' => depth += 1,
            '}' if depth == 1 => return Some(from + at + 1),
            '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
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

/// Every `crate::…`, `self::…` and `super::…` path written in the code itself.
fn inline_paths(text: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for root in ["crate::", "self::", "super::"] {
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
                let (file, text) = (PathBuf::from(path), (*text).to_owned());
                (module, Source { file, text })
            })
            .collect()
    }

    fn modules(names: &[&str]) -> Vec<Module> {
        names
            .iter()
            .map(|name| name.split("::").map(str::to_owned).collect())
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
        assert_eq!(circles(&files), vec![modules(&["a", "b"])]);
    }

    #[test]
    fn a_planted_circle_of_three_files_is_found_as_their_path() {
        let files = crate_of(&[
            ("lib.rs", "mod a;\nmod b;\nmod c;"),
            ("a.rs", "use crate::b::B;\npub struct A;"),
            ("b.rs", "pub fn b() -> crate::c::C { todo!() }"),
            ("c.rs", "pub use crate::a::{A, other::{X as Y}};"),
        ]);
        assert_eq!(circles(&files), vec![modules(&["a", "b", "c"])]);
        let shown = path_of_files(Path::new("src"), &circles(&files)[0], &files);
        assert_eq!(shown, "src/a.rs → src/b.rs → src/c.rs → src/a.rs");
    }

    #[test]
    fn super_starts_at_the_files_own_module_however_deep() {
        // `super::sibling` two floors down, and `super::super::` back into another folder.
        let files = crate_of(&[
            ("lib.rs", "mod x;\nmod y;"),
            ("x/mod.rs", "mod inner;"),
            ("x/inner/mod.rs", "mod p;\nmod q;"),
            ("x/inner/p.rs", "use super::q::Q;"),
            ("x/inner/q.rs", "use super::{p::{self, P}};"),
            ("y/mod.rs", "mod z;"),
            ("y/z.rs", "use super::super::x::inner::q::Q;"),
        ]);
        assert_eq!(
            circles(&files),
            vec![modules(&["x::inner::p", "x::inner::q"])]
        );
    }

    #[test]
    fn a_nested_super_pair_between_folders_is_a_circle() {
        let files = crate_of(&[
            ("lib.rs", "mod x;\nmod y;"),
            ("x/mod.rs", "mod a;"),
            ("x/a.rs", "fn f() { super::super::y::b::g() }"),
            ("y/mod.rs", "mod b;"),
            ("y/b.rs", "use super::super::x::a;"),
        ]);
        assert_eq!(circles(&files), vec![modules(&["x::a", "y::b"])]);
    }

    #[test]
    fn a_child_named_without_self_is_the_modules_own() {
        // `auction/mod.rs` uses its child `bids` by name; `bids` reaches `flow`, which uses
        // the folder: a circle through the folder's module file.
        let files = crate_of(&[
            ("lib.rs", "mod auction;\nmod flow;"),
            ("auction/mod.rs", "mod bids;\npub use bids::Bid;"),
            ("auction/bids.rs", "use crate::flow::Step;"),
            ("flow.rs", "use crate::auction::Bid;"),
        ]);
        assert_eq!(
            circles(&files),
            vec![modules(&["auction", "auction::bids", "flow"])]
        );
    }

    #[test]
    fn a_folder_that_reexports_its_children_stands_for_them() {
        // `infra` names the folder, the folder uses its `hash` file by name, `hash` uses
        // `infra`: a circle through the folder's module file.
        let files = crate_of(&[
            ("lib.rs", "mod declaration;\nmod infra;"),
            ("declaration/mod.rs", "mod hash;\npub use hash::Hash;"),
            (
                "declaration/hash.rs",
                "use crate::infra::Spec;\npub struct Hash;",
            ),
            (
                "infra.rs",
                "use crate::declaration::Hash;\npub struct Spec;",
            ),
        ]);
        assert_eq!(
            circles(&files),
            vec![modules(&["declaration", "declaration::hash", "infra"])]
        );
    }

    #[test]
    fn acyclic_layouts_pass() {
        let files = crate_of(&[
            (
                "lib.rs",
                "mod kernel;\nmod a;\nmod b;\npub use a::{A, b::B};",
            ),
            ("kernel.rs", "pub struct Id;"),
            (
                "a/mod.rs",
                "mod inner;\nuse crate::{kernel::Id, b::B};\nuse self::inner::I;",
            ),
            ("a/inner.rs", "use super::super::kernel::Id;\nuse super::A;"),
            ("b.rs", "use super::kernel::{self, Id};"),
        ]);
        assert!(circles(&files).is_empty());
    }

    #[test]
    fn comments_and_test_blocks_import_nothing() {
        let files = crate_of(&[
            ("a.rs", "//! See [`crate::b`].\nfn f() {}"),
            (
                "b.rs",
                "#[cfg(test)]\nmod tests {\n    use crate::a;\n}\nfn g() {}\n\
                 #[cfg(test)]\nmod more_tests {\n    fn h() { crate::a::f() }\n}",
            ),
        ]);
        assert!(circles(&files).is_empty());
    }
}

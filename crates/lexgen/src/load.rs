//! Reading `lexicons/**/*.json` into lexicon documents.
//!
//! Invariants: every `.json` file below the directory is read (others are ignored); its path
//! relative to the directory must be its NSID with `.` as `/` (`computer/socialweb/infra.json`
//! holds `computer.socialweb.infra`); no NSID appears twice; the result is ordered by NSID, so
//! everything generated from it is deterministic.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::LexgenError;
use crate::schema::LexiconDoc;

/// A parsed lexicon and where it came from.
#[derive(Debug, Clone)]
pub struct LoadedLexicon {
    /// The document.
    pub doc: LexiconDoc,
    /// Its path relative to the lexicon directory, with `/` separators.
    pub relative_path: String,
}

/// Every lexicon below `dir`, by NSID.
pub fn load_dir(dir: &Path) -> Result<BTreeMap<String, LoadedLexicon>, LexgenError> {
    let mut files = Vec::new();
    collect_json_files(dir, &mut files)?;
    let mut lexicons = BTreeMap::new();
    for file in files {
        let loaded = load_file(dir, &file)?;
        let nsid = loaded.doc.id.clone();
        if lexicons.insert(nsid.clone(), loaded).is_some() {
            return Err(LexgenError::DuplicateNsid(nsid));
        }
    }
    Ok(lexicons)
}

fn collect_json_files(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), LexgenError> {
    let entries = std::fs::read_dir(dir).map_err(|source| LexgenError::io(dir, source))?;
    for entry in entries {
        let path = entry.map_err(|source| LexgenError::io(dir, source))?.path();
        if path.is_dir() {
            collect_json_files(&path, files)?;
        } else if path.extension().is_some_and(|ext| ext == "json") {
            files.push(path);
        }
    }
    Ok(())
}

fn load_file(dir: &Path, file: &Path) -> Result<LoadedLexicon, LexgenError> {
    let text = std::fs::read_to_string(file).map_err(|source| LexgenError::io(file, source))?;
    let doc: LexiconDoc = serde_json::from_str(&text).map_err(|source| LexgenError::Parse {
        path: file.to_path_buf(),
        source,
    })?;
    let relative_path = relative_slash_path(dir, file);
    let expected = format!("{}.json", doc.id.replace('.', "/"));
    if relative_path != expected {
        return Err(LexgenError::PathMismatch {
            path: relative_path,
            nsid: doc.id,
        });
    }
    Ok(LoadedLexicon { doc, relative_path })
}

fn relative_slash_path(dir: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(dir).unwrap_or(file);
    let parts: Vec<String> = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

//! Checks of lexicon documents themselves: what serde cannot see in the format.
//!
//! Invariants: a document that passes has lexicon version 1, an NSID id, primary defs
//! (record, query, procedure, subscription, permission-set) only as `main`, and record keys of a
//! known kind. Problems point into the document (`/defs/main/key`), in def order.

use serde_json::Value;

use crate::problem::{Problem, pointer_child};
use crate::schema::{LexiconDoc, TopLevelDef};
use crate::syntax;

/// Parses a lexicon document and checks it, reporting every problem found.
pub fn parse_document(json: &Value) -> Result<LexiconDoc, Vec<Problem>> {
    let doc: LexiconDoc = serde_json::from_value(json.clone()).map_err(|error| {
        vec![Problem::new(
            "",
            format!("Not a lexicon document: {error}."),
            "Follow the lexicon v1 format: {\"lexicon\": 1, \"id\": NSID, \"defs\": {...}}.",
        )]
    })?;
    let problems = check_document(&doc);
    if problems.is_empty() {
        Ok(doc)
    } else {
        Err(problems)
    }
}

/// Every problem of a parsed document.
pub fn check_document(doc: &LexiconDoc) -> Vec<Problem> {
    let mut problems = Vec::new();
    if doc.lexicon != 1 {
        problems.push(Problem::new(
            "/lexicon",
            format!("Lexicon version {} is not supported.", doc.lexicon),
            "Set \"lexicon\" to 1.",
        ));
    }
    if let Err(error) = syntax::nsid(&doc.id) {
        problems.push(Problem::new(
            "/id",
            format!("{error}."),
            "Use an NSID such as com.example.record.",
        ));
    }
    for (name, def) in &doc.defs {
        let path = pointer_child("/defs", name);
        if def.is_primary() && name != "main" {
            problems.push(Problem::new(
                path.clone(),
                format!("A {} def must be named main.", primary_kind(def)),
                "Rename the def to main, or make it a non-primary type.",
            ));
        }
        if let TopLevelDef::Record(record) = def {
            check_record_key(&record.key, &path, &mut problems);
        }
    }
    problems
}

fn primary_kind(def: &TopLevelDef) -> &'static str {
    match def {
        TopLevelDef::Record(_) => "record",
        TopLevelDef::Query(_) => "query",
        TopLevelDef::Procedure(_) => "procedure",
        TopLevelDef::Subscription(_) => "subscription",
        _ => "permission-set",
    }
}

fn check_record_key(key: &str, def_path: &str, problems: &mut Vec<Problem>) {
    let known = matches!(key, "any" | "tid" | "nsid")
        || key
            .strip_prefix("literal:")
            .is_some_and(|literal| syntax::record_key(literal).is_ok());
    if !known {
        problems.push(Problem::new(
            format!("{def_path}/key"),
            format!("Record key type {key:?} is not defined."),
            "Use any, tid, nsid or literal:<record key>.",
        ));
    }
}

/// Whether `rkey` is allowed by a record's key type.
pub(super) fn rkey_allowed(key: &str, rkey: &str) -> Result<(), String> {
    let result = match key {
        "tid" => syntax::tid(rkey),
        "nsid" => syntax::nsid(rkey),
        _ => syntax::record_key(rkey),
    };
    result.map_err(|error| format!("{error}"))?;
    match key.strip_prefix("literal:") {
        Some(literal) if literal != rkey => {
            Err(format!("the only allowed record key is {literal:?}"))
        }
        _ => Ok(()),
    }
}

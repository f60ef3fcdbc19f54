//! Lexicon validation driven by the lexicon JSON at runtime: a [`Catalog`] of lexicon documents
//! (the built-in one embeds `lexicons/`), and checks of values against its defs that return
//! **every** [`Problem`] at once, with a JSON Pointer to each and what would fix it.
//!
//! What is checked: types, `required`, `nullable`, string length in bytes and graphemes, integer
//! range, `const` and `enum`, string formats, array length, refs, open and closed unions, blobs,
//! bytes and CID links, and the data model everywhere (no floats, well-formed `$link`, `$bytes`,
//! blobs and `$type`), including in fields the lexicon does not declare. Unknown fields are
//! allowed; `knownValues` is advice, never a check. The order of problems is documented in
//! `walk`: depth first, in lexicon declaration order, so the same value always gives the same list.

mod document;
mod walk;

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde_json::Value;

pub use document::{check_document, parse_document};

use crate::problem::{Problem, pointer_child};
use crate::schema::{Body, FieldSchema, LexiconDoc, TopLevelDef, resolve_ref};
use walk::Walker;

/// Why a catalog could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    /// A document is not a valid lexicon.
    #[error("lexicon {name} is invalid: {problems:?}")]
    Invalid {
        /// The document's NSID, or its position when it has none.
        name: String,
        /// What is wrong with it.
        problems: Vec<Problem>,
    },
    /// Two documents define the same NSID.
    #[error("lexicon {0} is defined twice")]
    Duplicate(String),
}

/// A set of lexicon documents by NSID: what refs resolve against.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    docs: BTreeMap<String, LexiconDoc>,
}

static BUILTIN: LazyLock<Result<Catalog, CatalogError>> = LazyLock::new(|| {
    let texts = crate::generated::lexicons::LEXICONS.iter();
    Catalog::from_json_texts(texts.map(|(_, json)| *json))
});

/// The lexicons of `lexicons/`, embedded in the crate.
pub fn builtin() -> Result<&'static Catalog, &'static CatalogError> {
    BUILTIN.as_ref()
}

/// Validates a record of one of swdesk's collections against the built-in lexicons.
pub fn validate_record(collection: &str, value: &Value) -> Vec<Problem> {
    match builtin() {
        Ok(catalog) => catalog.validate_record(collection, value),
        Err(error) => vec![Problem::new(
            "",
            format!("The built-in lexicons do not load: {error}."),
            "This is a bug in swdesk-lexicon: fix the lexicon files and regenerate.",
        )],
    }
}

/// Which body of an XRPC method to validate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XrpcBody {
    /// A procedure's request body.
    Input,
    /// A query's or procedure's response body.
    Output,
    /// One message of a subscription.
    Message,
}

impl Catalog {
    /// A catalog of JSON lexicon documents, each checked.
    pub fn from_json_texts<'t>(
        texts: impl IntoIterator<Item = &'t str>,
    ) -> Result<Self, CatalogError> {
        let mut catalog = Self::default();
        for (position, text) in texts.into_iter().enumerate() {
            let invalid = |problems| CatalogError::Invalid {
                name: format!("#{position}"),
                problems,
            };
            let json: Value = serde_json::from_str(text).map_err(|error| {
                invalid(vec![Problem::new(
                    "",
                    format!("Not JSON: {error}."),
                    "Write valid JSON.",
                )])
            })?;
            catalog.insert(parse_document(&json).map_err(invalid)?)?;
        }
        Ok(catalog)
    }

    /// Adds a document, checked.
    pub fn insert(&mut self, doc: LexiconDoc) -> Result<(), CatalogError> {
        let problems = check_document(&doc);
        if !problems.is_empty() {
            return Err(CatalogError::Invalid {
                name: doc.id,
                problems,
            });
        }
        if self.docs.contains_key(&doc.id) {
            return Err(CatalogError::Duplicate(doc.id));
        }
        self.docs.insert(doc.id.clone(), doc);
        Ok(())
    }

    /// The document of an NSID.
    pub fn get(&self, nsid: &str) -> Option<&LexiconDoc> {
        self.docs.get(nsid)
    }

    /// Every NSID, sorted.
    pub fn nsids(&self) -> impl Iterator<Item = &str> {
        self.docs.keys().map(String::as_str)
    }

    /// Whether a record lexicon of `nsid` is loaded.
    pub fn knows_record(&self, nsid: &str) -> bool {
        matches!(self.def(nsid, "main"), Some(TopLevelDef::Record(_)))
    }

    fn def(&self, nsid: &str, name: &str) -> Option<&TopLevelDef> {
        self.docs.get(nsid)?.defs.get(name)
    }

    /// Every ref and union member in every document that names a def no document defines.
    /// Paths point into the document; messages name it.
    pub fn unresolved_refs(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        for (nsid, doc) in &self.docs {
            for (name, def) in &doc.defs {
                let path = pointer_child("/defs", name);
                for (at, target) in def_refs(def, &path) {
                    let (target_nsid, target_name) = resolve_ref(nsid, &target);
                    if self.def(target_nsid, target_name).is_none() {
                        problems.push(Problem::new(
                            at,
                            format!("{nsid} refers to {target}, which no loaded lexicon defines."),
                            format!("Add the def {target_nsid}#{target_name}, or fix the ref."),
                        ));
                    }
                }
            }
        }
        problems
    }

    /// Every problem of a record value of `collection` (the record's `$type`, if present, must
    /// name it).
    pub fn validate_record(&self, collection: &str, value: &Value) -> Vec<Problem> {
        let Some(TopLevelDef::Record(record)) = self.def(collection, "main") else {
            return vec![no_def(collection, "a record lexicon")];
        };
        let mut walker = Walker::new(self);
        match value.get("$type") {
            Some(Value::String(tag)) if tag == collection => {}
            None => {}
            Some(found) => walker.report(
                "/$type",
                format!("`$type` is {found}, but the record is in collection {collection}."),
                format!("Set `$type` to \"{collection}\"."),
            ),
        }
        walker.object(collection, record.record.object(), value, "");
        walker.finish()
    }

    /// Problems of a record key for `collection` (by the lexicon's key type); the path is `""`.
    pub fn validate_rkey(&self, collection: &str, rkey: &str) -> Vec<Problem> {
        let Some(TopLevelDef::Record(record)) = self.def(collection, "main") else {
            return vec![no_def(collection, "a record lexicon")];
        };
        match document::rkey_allowed(&record.key, rkey) {
            Ok(()) => Vec::new(),
            Err(reason) => vec![Problem::new(
                "",
                format!("Record key {rkey:?} is not allowed in {collection}: {reason}."),
                format!("Use a record key of type {}.", record.key),
            )],
        }
    }

    /// Every problem of a value of the def `reference` (`nsid#name`, or `nsid` for `main`).
    pub fn validate_def(&self, reference: &str, value: &Value) -> Vec<Problem> {
        let mut walker = Walker::new(self);
        walker.reference(reference, reference, value, "");
        walker.finish()
    }

    /// Every problem of an XRPC body (JSON) of method `nsid`.
    pub fn validate_xrpc(&self, nsid: &str, body: XrpcBody, value: &Value) -> Vec<Problem> {
        let Some(schema) = self
            .def(nsid, "main")
            .and_then(|def| body_schema(def, body))
        else {
            return vec![no_def(nsid, "an XRPC method with that body")];
        };
        let mut walker = Walker::new(self);
        walker.field(nsid, schema, value, "");
        walker.finish()
    }
}

fn no_def(nsid: &str, what: &str) -> Problem {
    Problem::new(
        "",
        format!("No lexicon defines {nsid} as {what}."),
        format!("Load the lexicon of {nsid}, or check the NSID."),
    )
}

fn body_schema(def: &TopLevelDef, body: XrpcBody) -> Option<&FieldSchema> {
    fn of(body: &Option<Body>) -> Option<&FieldSchema> {
        body.as_ref().and_then(|b| b.schema.as_ref())
    }
    match (def, body) {
        (TopLevelDef::Procedure(p), XrpcBody::Input) => of(&p.input),
        (TopLevelDef::Procedure(p), XrpcBody::Output) => of(&p.output),
        (TopLevelDef::Query(q), XrpcBody::Output) => of(&q.output),
        (TopLevelDef::Subscription(s), XrpcBody::Message) => s.message.as_ref().map(|m| &m.schema),
        _ => None,
    }
}

/// Every ref target in a def, with the pointer to where it is written.
fn def_refs(def: &TopLevelDef, path: &str) -> Vec<(String, String)> {
    let mut refs = Vec::new();
    let mut object = |object: &crate::schema::ObjectSchema, at: &str| {
        for (name, field) in &object.properties {
            field_refs(field, &format!("{at}/properties/{name}"), &mut refs);
        }
    };
    match def {
        TopLevelDef::Record(record) => object(record.record.object(), &format!("{path}/record")),
        TopLevelDef::Object(schema) => object(schema, path),
        TopLevelDef::Array(array) => field_refs(&array.items, &format!("{path}/items"), &mut refs),
        TopLevelDef::Query(query) => {
            body_refs(query.output.as_ref(), &format!("{path}/output"), &mut refs)
        }
        TopLevelDef::Procedure(procedure) => {
            body_refs(
                procedure.input.as_ref(),
                &format!("{path}/input"),
                &mut refs,
            );
            body_refs(
                procedure.output.as_ref(),
                &format!("{path}/output"),
                &mut refs,
            );
        }
        TopLevelDef::Subscription(subscription) => {
            if let Some(message) = &subscription.message {
                field_refs(
                    &message.schema,
                    &format!("{path}/message/schema"),
                    &mut refs,
                );
            }
        }
        _ => {}
    }
    refs
}

fn body_refs(body: Option<&Body>, path: &str, refs: &mut Vec<(String, String)>) {
    if let Some(schema) = body.and_then(|body| body.schema.as_ref()) {
        field_refs(schema, &format!("{path}/schema"), refs);
    }
}

fn field_refs(schema: &FieldSchema, path: &str, refs: &mut Vec<(String, String)>) {
    match schema {
        FieldSchema::Ref(reference) => refs.push((path.to_owned(), reference.target.clone())),
        FieldSchema::Union(union) => {
            for (index, target) in union.refs.iter().enumerate() {
                refs.push((format!("{path}/refs/{index}"), target.clone()));
            }
        }
        FieldSchema::Array(array) => field_refs(&array.items, &format!("{path}/items"), refs),
        FieldSchema::Object(object) => {
            for (name, field) in &object.properties {
                field_refs(field, &format!("{path}/properties/{name}"), refs);
            }
        }
        _ => {}
    }
}

//! The walk of a value along its schema, collecting every problem.
//!
//! Order (deterministic, depth first): at an object, first the object itself (its type, its
//! data-model form), then each missing required field in `required` order, then each declared
//! field present in the value in the lexicon's declaration order (recursively), then the fields
//! the lexicon does not declare, in the value's own order (checked against the data model only).
//! An array reports its length before its elements, in index order. Within one value, the
//! constraint problems come in the order `const`, `enum`, length, graphemes, range, format.
//!
//! Invariants: a value is never reported twice for one fault (a wrong type stops the checks of
//! that value); every problem's path is a JSON Pointer from the walk's root value.

use serde_json::{Map, Value};
use unicode_segmentation::UnicodeSegmentation;

use super::Catalog;
use crate::data_model::{self, DataModelError, DataModelErrorKind, Special};
use crate::problem::{Problem, pointer_child, pointer_index};
use crate::schema::{
    ArraySchema, BlobSchema, BooleanSchema, BytesSchema, FieldSchema, IntegerSchema, ObjectSchema,
    StringFormat, StringSchema, TopLevelDef, UnionSchema, resolve_ref,
};
use crate::syntax;

/// Collects the problems of one validation.
pub(super) struct Walker<'c> {
    catalog: &'c Catalog,
    problems: Vec<Problem>,
}

impl<'c> Walker<'c> {
    pub(super) fn new(catalog: &'c Catalog) -> Self {
        Self {
            catalog,
            problems: Vec::new(),
        }
    }

    pub(super) fn finish(self) -> Vec<Problem> {
        self.problems
    }

    pub(super) fn report(&mut self, path: &str, message: String, fix: impl Into<String>) {
        self.problems.push(Problem::new(path, message, fix));
    }

    fn mismatch(&mut self, path: &str, expected: &str, value: &Value) {
        let found = describe(value);
        self.report(
            path,
            format!("Expected {expected}, found {found}."),
            format!("Write {expected} here."),
        );
    }

    fn data_model_problem(&mut self, base: &str, error: DataModelError) {
        let fix = error.kind.fix();
        let path = format!("{base}{}", error.path);
        self.report(
            &path,
            format!("{}.", capitalized(&error.kind.to_string())),
            fix,
        );
    }

    /// Data-model checks only: for values the schema does not type.
    pub(super) fn data_model(&mut self, value: &Value, path: &str) {
        for error in data_model::check(value) {
            self.data_model_problem(path, error);
        }
    }

    /// A plain object, or `None` after reporting why the value is not one.
    fn plain_object<'v>(
        &mut self,
        value: &'v Value,
        path: &str,
        expected: &str,
    ) -> Option<&'v Map<String, Value>> {
        let Value::Object(object) = value else {
            self.mismatch(path, expected, value);
            return None;
        };
        match data_model::classify(object) {
            Ok(Special::Plain) => Some(object),
            Ok(_) => {
                self.mismatch(path, expected, value);
                None
            }
            Err(kind) => {
                let keeps_checking = kind == DataModelErrorKind::BadType;
                let error = DataModelError {
                    path: String::new(),
                    kind,
                };
                self.data_model_problem(path, error);
                keeps_checking.then_some(object)
            }
        }
    }

    pub(super) fn object(&mut self, nsid: &str, schema: &ObjectSchema, value: &Value, path: &str) {
        let Some(object) = self.plain_object(value, path, "an object") else {
            return;
        };
        for name in &schema.required {
            if !object.contains_key(name) {
                let expected = schema
                    .properties
                    .get(name)
                    .map_or_else(|| "a value".to_owned(), |field| self.expected(nsid, field));
                self.report(
                    &pointer_child(path, name),
                    format!("`{name}` is required and missing."),
                    format!("Add `{name}` ({expected})."),
                );
            }
        }
        for (name, field) in &schema.properties {
            let Some(member) = object.get(name) else {
                continue;
            };
            let child = pointer_child(path, name);
            if !member.is_null() {
                self.field(nsid, field, member, &child);
            } else if !schema.nullable.contains(name) {
                self.report(
                    &child,
                    format!("`{name}` is null, which it may not be."),
                    format!("Remove `{name}` or give it {}.", self.expected(nsid, field)),
                );
            }
        }
        for (name, member) in object {
            if name != "$type" && !schema.properties.contains_key(name) {
                self.data_model(member, &pointer_child(path, name));
            }
        }
    }

    /// What `schema` (written in `nsid`) expects, for messages.
    fn expected(&self, nsid: &str, schema: &FieldSchema) -> String {
        expected_of(schema, |target| {
            let (target_nsid, name) = resolve_ref(nsid, target);
            self.catalog.def(target_nsid, name).map(expected_of_def)
        })
    }

    pub(super) fn field(&mut self, nsid: &str, schema: &FieldSchema, value: &Value, path: &str) {
        match schema {
            FieldSchema::Boolean(s) => self.boolean(s, value, path),
            FieldSchema::Integer(s) => self.integer(s, value, path),
            FieldSchema::String(s) => self.string(s, value, path),
            FieldSchema::Bytes(s) => self.bytes(s, value, path),
            FieldSchema::CidLink(_) => self.cid_link(value, path),
            FieldSchema::Blob(s) => self.blob(s, value, path),
            FieldSchema::Array(s) => self.array(nsid, s, value, path),
            FieldSchema::Object(s) => self.object(nsid, s, value, path),
            FieldSchema::Ref(s) => self.reference(nsid, &s.target, value, path),
            FieldSchema::Union(s) => self.union(nsid, s, value, path),
            FieldSchema::Unknown(_) => self.unknown(value, path),
        }
    }

    /// Validates `value` against the def `target` names (relative to `nsid`).
    pub(super) fn reference(&mut self, nsid: &str, target: &str, value: &Value, path: &str) {
        let (target_nsid, def_name) = resolve_ref(nsid, target);
        let Some(def) = self.catalog.def(target_nsid, def_name) else {
            self.report(
                path,
                format!("The lexicon refers to {target_nsid}#{def_name}, which no loaded lexicon defines."),
                format!("Load the lexicon {target_nsid} into the catalog."),
            );
            return;
        };
        self.def(target_nsid, def_name, def, value, path);
    }

    fn def(&mut self, nsid: &str, name: &str, def: &TopLevelDef, value: &Value, path: &str) {
        match def {
            TopLevelDef::Object(s) => self.object(nsid, s, value, path),
            TopLevelDef::Record(s) => self.object(nsid, s.record.object(), value, path),
            TopLevelDef::String(s) => self.string(s, value, path),
            TopLevelDef::Integer(s) => self.integer(s, value, path),
            TopLevelDef::Boolean(s) => self.boolean(s, value, path),
            TopLevelDef::Bytes(s) => self.bytes(s, value, path),
            TopLevelDef::CidLink(_) => self.cid_link(value, path),
            TopLevelDef::Blob(s) => self.blob(s, value, path),
            TopLevelDef::Array(s) => self.array(nsid, s, value, path),
            TopLevelDef::Token(_) => self.token(&format!("{nsid}#{name}"), value, path),
            TopLevelDef::Query(_)
            | TopLevelDef::Procedure(_)
            | TopLevelDef::Subscription(_)
            | TopLevelDef::PermissionSet(_) => self.report(
                path,
                format!("{nsid}#{name} is not a type a value can have."),
                "Fix the lexicon: refer to an object, record or other data type.",
            ),
        }
    }

    fn token(&mut self, token: &str, value: &Value, path: &str) {
        if value.as_str() != Some(token) {
            self.report(
                path,
                format!("Expected the token \"{token}\", found {}.", describe(value)),
                format!("Write \"{token}\"."),
            );
        }
    }

    fn boolean(&mut self, schema: &BooleanSchema, value: &Value, path: &str) {
        let Some(flag) = value.as_bool() else {
            return self.mismatch(path, "a boolean", value);
        };
        if let Some(expected) = schema.const_value.filter(|expected| *expected != flag) {
            self.report(
                path,
                format!("Must be {expected}, found {flag}."),
                format!("Set it to {expected}."),
            );
        }
    }

    fn integer(&mut self, schema: &IntegerSchema, value: &Value, path: &str) {
        let number = match (value, data_model::integer(value)) {
            // The data model takes an integral float (`2.0`, `-0`) as an integer; a record's
            // integer field must be written as one, so what validates reads into its type.
            (Value::Number(written), Ok(_)) if written.is_f64() => {
                return self.mismatch(path, "an integer (not a float)", value);
            }
            (Value::Number(_), Ok(number)) => number,
            (Value::Number(_), Err(kind)) => {
                let error = DataModelError {
                    path: String::new(),
                    kind,
                };
                return self.data_model_problem(path, error);
            }
            _ => return self.mismatch(path, "an integer", value),
        };
        if let Some(expected) = schema.const_value.filter(|expected| *expected != number) {
            self.report(
                path,
                format!("Must be {expected}, found {number}."),
                format!("Set it to {expected}."),
            );
        }
        if let Some(allowed) = schema
            .enum_values
            .as_ref()
            .filter(|allowed| !allowed.contains(&number))
        {
            let list = join(allowed.iter().map(ToString::to_string));
            self.report(
                path,
                format!("{number} is not one of {list}."),
                format!("Use one of {list}."),
            );
        }
        let below = schema.minimum.is_some_and(|minimum| number < minimum);
        let above = schema.maximum.is_some_and(|maximum| number > maximum);
        if below || above {
            let range = describe_range(schema.minimum, schema.maximum);
            self.report(
                path,
                format!("{number} is out of range ({range})."),
                format!("Use a value {range}."),
            );
        }
    }

    fn string(&mut self, schema: &StringSchema, value: &Value, path: &str) {
        let Some(text) = value.as_str() else {
            return self.mismatch(path, "a string", value);
        };
        if let Some(expected) = schema
            .const_value
            .as_ref()
            .filter(|expected| *expected != text)
        {
            self.report(
                path,
                format!("Must be {expected:?}, found {text:?}."),
                format!("Set it to {expected:?}."),
            );
        }
        if let Some(allowed) = schema
            .enum_values
            .as_ref()
            .filter(|allowed| !allowed.iter().any(|a| a == text))
        {
            let list = join(allowed.iter().map(|value| format!("{value:?}")));
            self.report(
                path,
                format!("{text:?} is not one of {list}."),
                format!("Use one of {list}."),
            );
        }
        self.length(
            path,
            "byte",
            text.len(),
            schema.min_length,
            schema.max_length,
            "(UTF-8)",
        );
        if schema.min_graphemes.is_some() || schema.max_graphemes.is_some() {
            let graphemes = text.graphemes(true).count();
            self.length(
                path,
                "character",
                graphemes,
                schema.min_graphemes,
                schema.max_graphemes,
                "(graphemes)",
            );
        }
        if let Some(format) = schema.format {
            self.format(format, text, path);
        }
    }

    fn format(&mut self, format: StringFormat, text: &str, path: &str) {
        if let Err(error) = syntax::check_format(format, text) {
            self.report(
                path,
                format!("{text:?} is {error}."),
                format!(
                    "Write a valid `{}` string, such as {}.",
                    format.as_str(),
                    format_example(format)
                ),
            );
        }
    }

    /// Reports a length outside `min..=max`; `unit` is singular, `note` says how it is counted.
    fn length(
        &mut self,
        path: &str,
        unit: &str,
        length: usize,
        min: Option<u64>,
        max: Option<u64>,
        note: &str,
    ) {
        let length = u64::try_from(length).unwrap_or(u64::MAX);
        if let Some(min) = min.filter(|min| length < *min) {
            self.report(
                path,
                format!(
                    "Is {} long {note}; at least {} required.",
                    counted(length, unit),
                    counted(min, unit)
                ),
                format!("Lengthen it to at least {}.", counted(min, unit)),
            );
        }
        if let Some(max) = max.filter(|max| length > *max) {
            self.report(
                path,
                format!(
                    "Is {} long {note}; at most {} allowed.",
                    counted(length, unit),
                    counted(max, unit)
                ),
                format!("Shorten it to at most {}.", counted(max, unit)),
            );
        }
    }

    fn special(&mut self, value: &Value, path: &str, expected: &str) -> Option<Special> {
        let Value::Object(object) = value else {
            self.mismatch(path, expected, value);
            return None;
        };
        match data_model::classify(object) {
            Ok(special) => Some(special),
            Err(kind) => {
                self.data_model_problem(
                    path,
                    DataModelError {
                        path: String::new(),
                        kind,
                    },
                );
                None
            }
        }
    }

    fn bytes(&mut self, schema: &BytesSchema, value: &Value, path: &str) {
        const EXPECTED: &str = "bytes ({\"$bytes\": \"<base64>\"})";
        match self.special(value, path, EXPECTED) {
            Some(Special::Bytes(bytes)) => {
                self.length(
                    path,
                    "byte",
                    bytes.len(),
                    schema.min_length,
                    schema.max_length,
                    "(decoded)",
                );
            }
            Some(_) => self.mismatch(path, EXPECTED, value),
            None => {}
        }
    }

    fn cid_link(&mut self, value: &Value, path: &str) {
        const EXPECTED: &str = "a CID link ({\"$link\": \"<CID>\"})";
        match self.special(value, path, EXPECTED) {
            Some(Special::Link(_)) | None => {}
            Some(_) => self.mismatch(path, EXPECTED, value),
        }
    }

    fn blob(&mut self, schema: &BlobSchema, value: &Value, path: &str) {
        const EXPECTED: &str = "a blob ({\"$type\": \"blob\", ...})";
        let blob = match self.special(value, path, EXPECTED) {
            Some(Special::Blob(blob)) => blob,
            Some(_) => return self.mismatch(path, EXPECTED, value),
            None => return,
        };
        let size = u64::try_from(blob.size).unwrap_or_default();
        if let Some(max) = schema.max_size.filter(|max| size > *max) {
            self.report(
                path,
                format!("The blob is {size} bytes; at most {max} allowed."),
                format!("Use a blob of at most {max} bytes."),
            );
        }
        if let Some(accept) = schema
            .accept
            .as_ref()
            .filter(|a| !a.iter().any(|p| mime_matches(p, &blob.mime_type)))
        {
            let list = join(accept.iter().cloned());
            self.report(
                path,
                format!(
                    "A blob of type {} is not accepted here ({list}).",
                    blob.mime_type
                ),
                format!("Use a blob of type {list}."),
            );
        }
    }

    fn array(&mut self, nsid: &str, schema: &ArraySchema, value: &Value, path: &str) {
        let Some(items) = value.as_array() else {
            return self.mismatch(path, "an array", value);
        };
        let count = u64::try_from(items.len()).unwrap_or(u64::MAX);
        if let Some(min) = schema.min_length.filter(|min| count < *min) {
            self.report(
                path,
                format!(
                    "Has {}; at least {min} required.",
                    counted(count, "element")
                ),
                format!("Give it at least {}.", counted(min, "element")),
            );
        }
        if let Some(max) = schema.max_length.filter(|max| count > *max) {
            self.report(
                path,
                format!("Has {}; at most {max} allowed.", counted(count, "element")),
                format!("Remove elements down to at most {max}."),
            );
        }
        for (index, item) in items.iter().enumerate() {
            self.field(nsid, &schema.items, item, &pointer_index(path, index));
        }
    }

    fn unknown(&mut self, value: &Value, path: &str) {
        if let Some(object) = self.plain_object(value, path, "an object") {
            for (name, member) in object {
                self.data_model(member, &pointer_child(path, name));
            }
        }
    }

    fn union(&mut self, nsid: &str, schema: &UnionSchema, value: &Value, path: &str) {
        let Some(object) = self.plain_object(value, path, "an object with a `$type`") else {
            return;
        };
        let tag = match object.get("$type") {
            Some(Value::String(tag)) if !tag.is_empty() => tag.as_str(),
            // A malformed `$type` was reported as a data-model problem already.
            Some(_) => return,
            None => {
                let list = join(schema.refs.iter().map(|r| full_ref(nsid, r)));
                return self.report(
                    &pointer_child(path, "$type"),
                    "A union member needs a `$type` and has none.".to_owned(),
                    format!("Add `$type`: one of {list}."),
                );
            }
        };
        let matching = schema
            .refs
            .iter()
            .find(|r| *r == tag || full_ref(nsid, r) == full_tag(tag));
        match matching {
            Some(target) => self.reference(nsid, target, value, path),
            None if schema.closed.unwrap_or(false) => {
                let list = join(schema.refs.iter().map(|r| full_ref(nsid, r)));
                self.report(
                    &pointer_child(path, "$type"),
                    format!("`$type` {tag} is not allowed here."),
                    format!("Use one of {list}."),
                );
            }
            None => {
                for (name, member) in object {
                    self.data_model(member, &pointer_child(path, name));
                }
            }
        }
    }
}

/// `#x` in `nsid` -> `nsid#x`; `other#main` -> `other`.
fn full_ref(nsid: &str, target: &str) -> String {
    let (target_nsid, name) = resolve_ref(nsid, target);
    if name == "main" {
        target_nsid.to_owned()
    } else {
        format!("{target_nsid}#{name}")
    }
}

fn full_tag(tag: &str) -> &str {
    tag.strip_suffix("#main").unwrap_or(tag)
}

fn mime_matches(pattern: &str, mime_type: &str) -> bool {
    match pattern.strip_suffix("/*") {
        Some("*") => true,
        Some(kind) => mime_type.split('/').next() == Some(kind),
        None => pattern == mime_type,
    }
}

/// What a value is, for messages.
fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(object) => match data_model::classify(object) {
            Ok(Special::Link(_)) => "a CID link",
            Ok(Special::Bytes(_)) => "bytes",
            Ok(Special::Blob(_)) => "a blob",
            _ => "an object",
        },
    }
}

/// What a schema expects, for messages; a ref is described by what it names (resolved by
/// `resolve`).
fn expected_of(schema: &FieldSchema, resolve: impl Fn(&str) -> Option<String>) -> String {
    match schema {
        FieldSchema::String(StringSchema {
            format: Some(format),
            ..
        }) => {
            format!("a `{}` string", format.as_str())
        }
        FieldSchema::Ref(reference) => {
            resolve(&reference.target).unwrap_or_else(|| "a value".to_owned())
        }
        FieldSchema::Boolean(_) => "a boolean".to_owned(),
        FieldSchema::Integer(_) => "an integer".to_owned(),
        FieldSchema::String(_) => "a string".to_owned(),
        FieldSchema::Bytes(_) => "bytes".to_owned(),
        FieldSchema::CidLink(_) => "a CID link".to_owned(),
        FieldSchema::Blob(_) => "a blob".to_owned(),
        FieldSchema::Array(_) => "an array".to_owned(),
        FieldSchema::Object(_) | FieldSchema::Unknown(_) => "an object".to_owned(),
        FieldSchema::Union(_) => "an object with a `$type`".to_owned(),
    }
}

/// What a named def expects, for messages.
fn expected_of_def(def: &TopLevelDef) -> String {
    match def {
        TopLevelDef::String(StringSchema {
            format: Some(format),
            ..
        }) => {
            format!("a `{}` string", format.as_str())
        }
        TopLevelDef::String(_) => "a string".to_owned(),
        TopLevelDef::Integer(_) => "an integer".to_owned(),
        TopLevelDef::Boolean(_) => "a boolean".to_owned(),
        TopLevelDef::Bytes(_) => "bytes".to_owned(),
        TopLevelDef::CidLink(_) => "a CID link".to_owned(),
        TopLevelDef::Blob(_) => "a blob".to_owned(),
        TopLevelDef::Array(_) => "an array".to_owned(),
        TopLevelDef::Token(_) => "a token string".to_owned(),
        _ => "an object".to_owned(),
    }
}

fn describe_range(minimum: Option<i64>, maximum: Option<i64>) -> String {
    match (minimum, maximum) {
        (Some(min), Some(max)) => format!("from {min} to {max}"),
        (Some(min), None) => format!("of at least {min}"),
        (None, Some(max)) => format!("of at most {max}"),
        (None, None) => "in range".to_owned(),
    }
}

fn format_example(format: StringFormat) -> &'static str {
    match format {
        StringFormat::AtIdentifier => "alice.example.com or did:plc:ewvi7nxzyoun6zhxrhs64oiz",
        StringFormat::AtUri => "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/computer.socialweb.infra/web",
        StringFormat::Cid => "bafyreiclp443lavogvhj3d2ob2cxbfuscni2k5jk7bebjzg7khl3esabwq",
        StringFormat::Datetime => "2026-12-02T10:00:00.000Z",
        StringFormat::Did => "did:plc:ewvi7nxzyoun6zhxrhs64oiz",
        StringFormat::Handle => "alice.example.com",
        StringFormat::Nsid => "computer.socialweb.infra",
        StringFormat::Tid => "3jzfcijpj2z2a",
        StringFormat::RecordKey => "self or web-1",
        StringFormat::Uri => "https://example.com/",
        StringFormat::Language => "en or pt-BR",
    }
}

/// `1 byte`, `2 bytes`.
fn counted(count: u64, unit: &str) -> String {
    if count == 1 {
        format!("1 {unit}")
    } else {
        format!("{count} {unit}s")
    }
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

//! The one integration test binary of `swdesk-lexgen`: what it generates from small lexicons,
//! and what it refuses.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use swdesk_lexgen::{GeneratedFile, LexgenError, LoadedLexicon, generate_from};

fn catalog(docs: &[Value]) -> BTreeMap<String, LoadedLexicon> {
    docs.iter()
        .map(|doc| {
            let doc: swdesk_lexgen::schema::LexiconDoc =
                serde_json::from_value(doc.clone()).expect("a lexicon document");
            let relative_path = format!("{}.json", doc.id.replace('.', "/"));
            (doc.id.clone(), LoadedLexicon { doc, relative_path })
        })
        .collect()
}

fn record(id: &str, properties: Value) -> Value {
    json!({"lexicon": 1, "id": id, "defs": {"main": {"type": "record", "key": "any",
        "record": {"type": "object", "properties": properties}}}})
}

fn file<'f>(files: &'f [GeneratedFile], path: &str) -> &'f str {
    let found = files.iter().find(|f| f.path == path);
    found
        .map(|f| f.contents.as_str())
        .unwrap_or_else(|| panic!("no {path}"))
}

#[test]
fn a_record_becomes_a_struct_with_unknown_fields_kept_in_a_module_per_segment() {
    let files = generate_from(&catalog(&[record(
        "com.example.thing",
        json!({"createdAt": {"type": "string", "description": "When."}}),
    )]))
    .expect("generates");
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "com.rs",
            "com/example.rs",
            "com/example/thing.rs",
            "lexicons.rs",
            "mod.rs"
        ]
    );
    let thing = file(&files, "com/example/thing.rs");
    assert!(thing.contains("pub struct Thing {"), "{thing}");
    assert!(thing.contains("pub created_at: Option<String>,"), "{thing}");
    assert!(
        thing.contains(
            "#[serde(flatten)]\n    pub extra: serde_json::Map<String, serde_json::Value>,"
        )
    );
    assert!(thing.contains("impl crate::Record for Thing {"));
}

#[test]
fn generation_is_deterministic() {
    let docs = [
        record("com.example.a", json!({"n": {"type": "integer"}})),
        record("com.example.b", json!({})),
    ];
    let first = generate_from(&catalog(&docs)).expect("generates");
    let second = generate_from(&catalog(&docs)).expect("generates");
    assert_eq!(first, second);
}

#[test]
fn a_field_whose_name_does_not_round_trip_through_camel_case_gets_an_explicit_rename() {
    let files = generate_from(&catalog(&[record(
        "com.example.x",
        json!({"cid-link": {"type": "string"}}),
    )]))
    .expect("generates");
    assert!(file(&files, "com/example/x.rs").contains("#[serde(rename = \"cid-link\")]"));
}

#[test]
fn known_values_become_an_open_enum_and_enum_values_a_closed_one() {
    let files = generate_from(&catalog(&[record(
        "com.example.x",
        json!({
            "color": {"type": "string", "knownValues": ["red", "blue"], "default": "blue"},
            "size": {"type": "string", "enum": ["s", "m"]}
        }),
    )]))
    .expect("generates");
    let x = file(&files, "com/example/x.rs");
    assert!(
        x.contains("crate::macros::open_string_enum!(XColor { Red = \"red\", Blue = \"blue\" });"),
        "{x}"
    );
    assert!(
        x.contains("crate::macros::closed_string_enum!(XSize { S = \"s\", M = \"m\" });"),
        "{x}"
    );
    assert!(x.contains("    #[default]\n    Blue,"), "{x}");
    assert!(
        x.contains("pub fn color_or_default(&self) -> XColor"),
        "{x}"
    );
}

#[test]
fn a_ref_to_a_missing_def_is_an_error() {
    let docs = [record(
        "com.example.x",
        json!({"r": {"type": "ref", "ref": "#nowhere"}}),
    )];
    assert!(matches!(
        generate_from(&catalog(&docs)),
        Err(LexgenError::UnresolvedRef { .. })
    ));
}

#[test]
fn unsupported_types_are_an_error_not_silently_skipped() {
    let docs = [record("com.example.x", json!({"b": {"type": "blob"}}))];
    assert!(matches!(
        generate_from(&catalog(&docs)),
        Err(LexgenError::Unsupported { .. })
    ));
    let nullable = json!({"lexicon": 1, "id": "com.example.y", "defs": {"main": {"type": "record",
        "key": "any", "record": {"type": "object", "nullable": ["n"], "properties": {"n": {"type": "integer"}}}}}});
    assert!(matches!(
        generate_from(&catalog(&[nullable])),
        Err(LexgenError::Unsupported { .. })
    ));
}

#[test]
fn two_defs_with_the_same_rust_name_are_an_error() {
    let doc = json!({"lexicon": 1, "id": "com.example.x", "defs": {
        "main": {"type": "record", "key": "any", "record": {"type": "object", "properties": {}}},
        "x": {"type": "object", "properties": {}}
    }});
    assert!(matches!(
        generate_from(&catalog(&[doc])),
        Err(LexgenError::NameCollision { .. })
    ));
}

#[test]
fn a_lexicon_file_not_at_its_nsid_path_is_refused() {
    let dir = std::env::temp_dir().join(format!("swdesk-lexgen-test-{}", std::process::id()));
    let misplaced = dir.join("com/example/wrong.json");
    std::fs::create_dir_all(misplaced.parent().expect("a parent")).expect("mkdir");
    let doc = record("com.example.right", json!({}));
    std::fs::write(&misplaced, doc.to_string()).expect("write");
    let result = swdesk_lexgen::generate(&dir);
    std::fs::remove_dir_all(&dir).expect("cleanup");
    assert!(
        matches!(result, Err(LexgenError::PathMismatch { .. })),
        "{result:?}"
    );
}

#[test]
fn a_bytes_field_becomes_the_crates_bytes_type() {
    let files = generate_from(&catalog(&[record(
        "com.example.signed",
        json!({"sig": {"type": "bytes"}}),
    )]))
    .expect("generates");
    let signed = file(&files, "com/example/signed.rs");
    assert!(
        signed.contains("pub sig: Option<crate::Bytes>,"),
        "{signed}"
    );
}

#[test]
fn an_object_main_def_is_named_after_its_nsid_wherever_it_is_referred_to() {
    let object = json!({"lexicon": 1, "id": "com.example.signature", "defs": {
        "main": {"type": "object", "properties": {"key": {"type": "string"}}},
        "list": {"type": "array", "items": {"type": "union", "refs": ["com.example.signature"]}}}});
    let user = record(
        "com.example.note",
        json!({"by": {"type": "ref", "ref": "com.example.signature"}}),
    );
    let files = generate_from(&catalog(&[object, user])).expect("generates");
    let signature = file(&files, "com/example/signature.rs");
    assert!(signature.contains("pub struct Signature {"), "{signature}");
    assert!(signature.contains("Signature(Signature),"), "{signature}");
    let note = file(&files, "com/example/note.rs");
    assert!(
        note.contains("Option<crate::generated::com::example::signature::Signature>"),
        "{note}"
    );
}

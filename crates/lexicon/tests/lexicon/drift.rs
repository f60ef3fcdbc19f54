//! The committed generated code must be exactly what the generator produces from `lexicons/`.

#[test]
fn committed_generated_code_is_what_the_generator_produces_now() {
    let (lexicon_dir, out_dir) = swdesk_lexgen::workspace_paths();
    let files = swdesk_lexgen::generate(&lexicon_dir).expect("the lexicons generate");
    let drift = swdesk_lexgen::drift(&out_dir, &files).expect("the generated directory reads");
    assert!(
        drift.is_empty(),
        "crates/lexicon/src/generated is stale: {drift:?}\nregenerate with `cargo run -p swdesk-lexgen`"
    );
}

#[test]
fn every_generated_file_starts_with_the_generated_header() {
    let (lexicon_dir, _) = swdesk_lexgen::workspace_paths();
    let files = swdesk_lexgen::generate(&lexicon_dir).expect("the lexicons generate");
    assert!(files.len() > 2);
    for file in files {
        assert!(
            file.contents.starts_with(swdesk_lexgen::HEADER),
            "{}",
            file.path
        );
        assert!(
            file.contents
                .lines()
                .nth(1)
                .is_some_and(|l| l.starts_with("//!")),
            "{}",
            file.path
        );
    }
}

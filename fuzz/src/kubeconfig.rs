//! `kubeconfig`: a kubeconfig as `getKubeconfig` answers it, read by
//! `swdesk_gateway::kubeconfig::Summary::parse` (YAML, base64, PEM, X.509, the CA's signature)
//! and rebuilt by `Minimal::rebuild` (the refusals, the re-encoded PEM blocks).
//!
//! Invariants:
//! - beyond not panicking, an error never repeats the kubeconfig's secrets (the module's
//!   promise: the text is never put in an error message): no error text contains the first 16
//!   characters of any `client-key-data`, `client-certificate-data`,
//!   `certificate-authority-data` or `token` value (or of any line of one written as a block
//!   scalar);
//! - a rebuilt kubeconfig passes our own verifier (`Summary::verify`) as what `rebuild`
//!   showed, is rebuilt to exactly itself, and holds no `exec`, `auth-provider`, proxy,
//!   skipped TLS check, token or password.

use swdesk_gateway::kubeconfig::{KubeconfigError, Minimal, Summary};

/// What a rebuilt kubeconfig never holds.
const NEVER_WRITTEN: [&str; 8] = [
    "exec:",
    "auth-provider:",
    "proxy-url:",
    "insecure-skip-tls-verify:",
    "token:",
    "tokenFile:",
    "client-key:",
    "password:",
];

/// The fields whose values are secret or identifying.
const SECRET_FIELDS: [&str; 4] = [
    "client-key-data:",
    "client-certificate-data:",
    "certificate-authority-data:",
    "token:",
];

pub fn check(data: &[u8]) {
    let text = crate::text(data);
    if let Err(error) = Summary::parse(&text) {
        keeps_secrets(&text, &error);
    }
    match Minimal::rebuild(&text, "fuzz", 0) {
        Ok(minimal) => rebuilt(&minimal),
        Err(error) => keeps_secrets(&text, &error),
    }
}

/// A rebuilt kubeconfig passes our own verifier, is rebuilt to itself, and holds none of
/// what the app never writes.
fn rebuilt(minimal: &Minimal) {
    let text = minimal.text().expose();
    let verified = match Summary::verify(text, 0) {
        Ok(summary) => summary,
        Err(error) => panic!("a rebuilt kubeconfig fails our verifier: {error}"),
    };
    assert_eq!(
        verified, minimal.summary,
        "the rebuilt file reads as another"
    );
    let again = match Minimal::rebuild(text, "fuzz", 0) {
        Ok(again) => again,
        Err(error) => panic!("a rebuilt kubeconfig is refused when rebuilt: {error}"),
    };
    assert_eq!(
        again.text().expose(),
        text,
        "rebuilding is not a fixed point"
    );
    for line in text.lines() {
        let key = line.trim_start().trim_start_matches("- ");
        for refused in NEVER_WRITTEN {
            assert!(
                !key.starts_with(refused),
                "a rebuilt kubeconfig holds {refused}"
            );
        }
    }
}

fn keeps_secrets(text: &str, error: &KubeconfigError) {
    let message = error.to_string();
    for secret in secrets(text) {
        assert!(
            !message.contains(secret),
            "the error repeats a secret of the kubeconfig ({secret:?}...): {message}"
        );
    }
}

/// The first 16 characters of each secret value of at least 16; for a block scalar (`|`, `>`),
/// of each of its lines.
fn secrets(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let indent = |line: &str| line.len() - line.trim_start().len();
    let mut secrets = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let field = line.trim_start().trim_start_matches("- ");
        let Some(value) = SECRET_FIELDS
            .iter()
            .find_map(|name| field.strip_prefix(name))
            .map(str::trim)
        else {
            continue;
        };
        if value.starts_with(['|', '>']) {
            let block = lines[index + 1..]
                .iter()
                .take_while(|next| next.trim().is_empty() || indent(next) > indent(line));
            secrets.extend(block.filter_map(|next| first_16(next.trim())));
        } else {
            secrets.extend(first_16(value.trim_matches(['"', '\''])));
        }
    }
    secrets
}

fn first_16(value: &str) -> Option<&str> {
    let end = value.char_indices().nth(16).map(|(at, _)| at)?;
    Some(&value[..end])
}

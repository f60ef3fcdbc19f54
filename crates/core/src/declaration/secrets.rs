//! Secrets kept out of the owner's public repo: a contract's `userData` is published in clear
//! text with the deployment's record, so a declaration whose `userData` looks like it holds a
//! secret is refused before anything is stored, naming every line and what it looks like, never
//! the secret itself.
//!
//! What counts as looking like a secret (each a line of `userData`):
//! - a private key block: `-----BEGIN … PRIVATE KEY…-----`;
//! - a well-known token format: a GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`,
//!   `github_pat_`), a GitLab token (`glpat-`), a Slack token (`xoxb-`, `xoxp-`, `xoxa-`,
//!   `xoxr-`, `xoxs-`), an AWS access key id (`AKIA` and 16 upper-case letters or digits);
//! - an assignment to a secret's name: `password`, `passwd`, `secret`, `token`, `api_key`,
//!   `apikey`, `access_key`, `private_key`, `client_secret` (any case, as the end of a longer name
//!   such as `DB_PASSWORD`) set with `=` or `:` to a literal value; a value that names another
//!   place (`$VAR`, `${VAR}`, `<placeholder>`) is not a secret.
//!
//! Invariants: pure; a problem never quotes the line it found (the message names the line
//! number and the kind of secret only).

use swdesk_lexicon::Problem;

use crate::infra::Contract;

/// The names whose literal values are secrets.
const SECRET_NAMES: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "access_key",
    "private_key",
    "client_secret",
];

/// Prefixes of well-known token formats, with what they are.
const TOKEN_PREFIXES: &[(&str, &str)] = &[
    ("github_pat_", "a GitHub token"),
    ("ghp_", "a GitHub token"),
    ("gho_", "a GitHub token"),
    ("ghu_", "a GitHub token"),
    ("ghs_", "a GitHub token"),
    ("ghr_", "a GitHub token"),
    ("glpat-", "a GitLab token"),
    ("xoxb-", "a Slack token"),
    ("xoxp-", "a Slack token"),
    ("xoxa-", "a Slack token"),
    ("xoxr-", "a Slack token"),
    ("xoxs-", "a Slack token"),
];

/// Every line of every contract's `userData` that looks like a secret, each a problem under
/// `/spec/contracts/<index>/userData`.
pub fn user_data_secret_problems(contracts: &[Contract]) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (index, contract) in contracts.iter().enumerate() {
        let Some(user_data) = contract.user_data.as_deref() else {
            continue;
        };
        for (number, kind) in secret_lines(user_data) {
            problems.push(Problem::new(
                format!("/spec/contracts/{index}/userData"),
                format!(
                    "line {number} of userData looks like it holds {kind}; userData is published \
                     in clear text in your public repo with the deployment's record"
                ),
                "Move it to the deployment's Secrets: its value stays in your keychain and \
                 reaches the guest sealed to the guest's own key.",
            ));
        }
    }
    problems
}

/// The 1-based numbers of the lines of `text` that look like a secret, with what each looks
/// like.
fn secret_lines(text: &str) -> Vec<(usize, &'static str)> {
    text.lines()
        .enumerate()
        .filter_map(|(index, line)| secret_kind(line).map(|kind| (index + 1, kind)))
        .collect()
}

/// What `line` looks like, when it looks like a secret.
fn secret_kind(line: &str) -> Option<&'static str> {
    if line.contains("-----BEGIN") && line.contains("PRIVATE KEY") {
        return Some("a private key");
    }
    for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')) {
        if let Some((_, kind)) = TOKEN_PREFIXES
            .iter()
            .find(|(prefix, _)| word.starts_with(prefix) && word.len() >= prefix.len() + 16)
        {
            return Some(kind);
        }
        if is_aws_access_key_id(word) {
            return Some("an AWS access key");
        }
    }
    secret_assignment(line).then_some("a secret assigned to a name like password or token")
}

/// `AKIA` followed by 16 upper-case letters or digits.
fn is_aws_access_key_id(word: &str) -> bool {
    word.len() == 20
        && word.starts_with("AKIA")
        && word[4..]
            .bytes()
            .all(|byte| byte.is_ascii_uppercase() || byte.is_ascii_digit())
}

/// Whether `line` sets a secret's name to a literal value (`DB_PASSWORD=…`, `token: …`).
fn secret_assignment(line: &str) -> bool {
    let Some(at) = line.find(['=', ':']) else {
        return false;
    };
    let (name, value) = (line[..at].trim(), line[at + 1..].trim());
    let name = name
        .trim_start_matches("export ")
        .trim_start_matches('-')
        .trim()
        .trim_matches(['"', '\''])
        .to_ascii_lowercase();
    let names_a_secret = SECRET_NAMES.iter().any(|secret| {
        name.strip_suffix(secret)
            .is_some_and(|rest| rest.is_empty() || rest.ends_with(['_', '-', '.']))
    });
    let value = value.trim_matches(['"', '\'']);
    let literal = !value.is_empty() && !value.starts_with(['$', '<', '{', '|', '>']);
    names_a_secret && literal
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn contract(user_data: &str) -> Contract {
        serde_json::from_value(json!({"name": "vm", "state": "staged", "userData": user_data}))
            .expect("a contract")
    }

    fn kinds(user_data: &str) -> Vec<(usize, &'static str)> {
        secret_lines(user_data)
    }

    #[test]
    fn a_private_key_block_a_known_token_and_a_password_line_are_each_found() {
        let user_data = "#cloud-config\n\
            write_files:\n\
            \x20 - content: |\n\
            \x20     -----BEGIN OPENSSH PRIVATE KEY-----\n\
            runcmd:\n\
            \x20 - git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r\n\
            \x20 - echo DB_PASSWORD=hunter2 >> /etc/app.env\n\
            \x20 - aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE\n";
        assert_eq!(
            kinds(user_data),
            vec![
                (4, "a private key"),
                (6, "a GitHub token"),
                (7, "a secret assigned to a name like password or token"),
                (8, "an AWS access key"),
            ]
        );
    }

    #[test]
    fn names_values_from_elsewhere_and_ordinary_settings_are_not_secrets() {
        for line in [
            "ssh_pwauth: false",
            "password: ${DB_PASSWORD}",
            "token: $K3S_TOKEN",
            "api_key: <set on the guest>",
            "chpasswd: { expire: false }",
            "tokens_per_second: 4",
            "echo ghp_short",
            "package_upgrade: true",
            "-----BEGIN PUBLIC KEY-----",
        ] {
            assert_eq!(kinds(line), Vec::new(), "{line}");
        }
        assert_eq!(kinds("  password: hunter2").len(), 1);
        assert_eq!(kinds("export API_KEY='abc123'").len(), 1);
        assert_eq!(kinds("k3s_token: K10abc::server:xyz").len(), 1);
    }

    #[test]
    fn every_secret_of_every_contract_is_named_by_line_and_never_quoted() {
        let contracts = vec![
            contract("#!/bin/sh\necho hi\n"),
            contract("#!/bin/sh\nexport GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"),
            contract("secret: s3cr3t-value\n-----BEGIN RSA PRIVATE KEY-----\n"),
        ];
        let problems = user_data_secret_problems(&contracts);
        let placed: Vec<(&str, bool)> = problems
            .iter()
            .map(|problem| (problem.path.as_str(), problem.message.starts_with("line ")))
            .collect();
        assert_eq!(
            placed,
            vec![
                ("/spec/contracts/1/userData", true),
                ("/spec/contracts/2/userData", true),
                ("/spec/contracts/2/userData", true),
            ]
        );
        for problem in &problems {
            for secret in ["ghp_abc", "s3cr3t", "hunter2"] {
                assert!(!problem.message.contains(secret), "{problem:?}");
                assert!(!problem.fix.contains(secret), "{problem:?}");
            }
        }
    }
}

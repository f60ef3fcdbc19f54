//! What of a declared contract the compute market carries, beyond the `compute.vm` sizes and
//! the policy ([`super::request`]): `sshAuthorizedKeys` reach the guest inside its cloud-init
//! `user_data`, and the fields the public `compute.vm` has no place for are refused with what to
//! do instead, never dropped without a word. The "Contract fields" table of
//! `docs/user-guide.md` says the same.
//!
//! Rules:
//! - each SSH key is one line of a known key type (`ssh-ed25519`, `ssh-rsa`,
//!   `ecdsa-sha2-nistp256|384|521`, the `sk-` security-key forms) and base64, at most 16 KiB;
//! - keys without `userData`: `user_data` is a `#cloud-config` holding only
//!   `ssh_authorized_keys`; keys with `userData`: a cloud-init MIME multi-part archive, the keys'
//!   `#cloud-config` part first, then `userData` as its own part (typed by its first line);
//! - `vmName`, `tunnels`, `agent`, `association`, `guestTools` have no field in the market's
//!   `compute.vm`: a requested contract naming one is refused.
//!
//! Invariants: pure; the same contract always composes the same `user_data` (the boundary is
//! derived from the content), so a redone step writes the same payload at the same cid.

use sha2::{Digest, Sha256};
use swdesk_lexicon::Problem;

use swdesk_lexicon::computer::socialweb::infra::Contract;

/// The longest SSH key line accepted.
pub const MAX_SSH_KEY_BYTES: usize = 16 * 1024;

/// Key types cloud-init's `ssh_authorized_keys` installs.
const KEY_TYPES: [&str; 7] = [
    "ssh-ed25519",
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
];

/// Contract fields the public `compute.vm` has no place for, with what to do instead.
const NOT_CARRIED: [(&str, &str); 5] = [
    (
        "vmName",
        "The provider names the guest; remove vmName (the contract's name is how you find it).",
    ),
    (
        "tunnels",
        "Start the tunnel from userData (cloud-init) on the guest, or remove tunnels.",
    ),
    (
        "agent",
        "Install the agent from userData (cloud-init) on the guest, or remove agent.",
    ),
    (
        "association",
        "Run the guest's own requester from userData, or remove association.",
    ),
    (
        "guestTools",
        "Install the tools from userData (cloud-init) on the guest, or remove guestTools.",
    ),
];

/// The `user_data` the guest boots with: `userData` as declared, with the contract's SSH keys
/// added as cloud-init installs them; a key that is not one is a problem at its index.
pub fn user_data(contract: &Contract, problems: &mut Vec<Problem>) -> String {
    let declared = contract.user_data.clone().unwrap_or_default();
    let keys = contract.ssh_authorized_keys.as_deref().unwrap_or_default();
    let mut good = Vec::new();
    for (index, key) in keys.iter().enumerate() {
        match key_problem(key) {
            None => good.push(key.trim()),
            Some(why) => problems.push(Problem::new(
                format!("/sshAuthorizedKeys/{index}"),
                why,
                "Give each key as one line, as in an authorized_keys file: \
                 \"ssh-ed25519 AAAA… comment\".",
            )),
        }
    }
    if good.is_empty() {
        return declared;
    }
    let config = keys_config(&good);
    if declared.is_empty() {
        config
    } else {
        multipart(&config, &declared)
    }
}

/// A problem for each declared field the market cannot carry.
pub fn not_carried(contract: &Contract) -> Vec<Problem> {
    let present = |field: &str| match field {
        "vmName" => contract.vm_name.is_some(),
        "tunnels" => contract.tunnels.as_ref().is_some_and(|t| !t.is_empty()),
        "agent" => contract.agent.is_some(),
        "association" => contract.association.is_some(),
        "guestTools" => contract.guest_tools.as_ref().is_some_and(|t| !t.is_empty()),
        _ => false,
    };
    NOT_CARRIED
        .iter()
        .filter(|(field, _)| present(field))
        .map(|(field, fix)| {
            Problem::new(
                format!("/{field}"),
                format!(
                    "{field} is not carried to the compute market: its compute.vm has no such \
                     field, so the guest would run without it."
                ),
                *fix,
            )
        })
        .collect()
}

fn key_problem(key: &str) -> Option<String> {
    let key = key.trim();
    if key.len() > MAX_SSH_KEY_BYTES {
        return Some(format!(
            "The key is {} bytes long; at most {MAX_SSH_KEY_BYTES}.",
            key.len()
        ));
    }
    if key.chars().any(char::is_control) {
        return Some("The key holds a line break or another control character.".to_owned());
    }
    let mut parts = key.split(' ');
    let kind = parts.next().unwrap_or_default();
    let body = parts.next().unwrap_or_default();
    if !KEY_TYPES.contains(&kind) {
        return Some(format!(
            "{:?} is not an SSH key type cloud-init installs ({}).",
            kind.chars().take(40).collect::<String>(),
            KEY_TYPES.join(", ")
        ));
    }
    let base64 = |c: char| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=');
    if body.is_empty() || !body.chars().all(base64) {
        return Some(format!("The {kind} key has no base64 key after its type."));
    }
    None
}

/// A `#cloud-config` installing `keys` (each a JSON string: a YAML double-quoted scalar).
fn keys_config(keys: &[&str]) -> String {
    let mut config = String::from("#cloud-config\nssh_authorized_keys:\n");
    for key in keys {
        let quoted = serde_json::to_string(key).unwrap_or_default();
        config.push_str(&format!("  - {quoted}\n"));
    }
    config
}

/// A cloud-init MIME multi-part archive of `config` then `declared`, its boundary derived from
/// both and absent from either.
fn multipart(config: &str, declared: &str) -> String {
    let digest = Sha256::digest(format!("{config}\0{declared}"));
    let mut boundary: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    boundary.insert_str(0, "==swdesk-");
    while config.contains(&boundary) || declared.contains(&boundary) {
        boundary.push('x');
    }
    format!(
        "Content-Type: multipart/mixed; boundary=\"{boundary}\"\nMIME-Version: 1.0\n\n\
         --{boundary}\n{}{config}\n--{boundary}\n{}{declared}\n--{boundary}--\n",
        part_headers("text/cloud-config"),
        part_headers(part_type(declared)),
    )
}

fn part_headers(content_type: &str) -> String {
    format!(
        "Content-Type: {content_type}; charset=\"utf-8\"\nMIME-Version: 1.0\n\
         Content-Transfer-Encoding: 8bit\n\n"
    )
}

/// The MIME type cloud-init gives a part by its first line.
fn part_type(declared: &str) -> &'static str {
    let first = declared.lines().next().unwrap_or_default();
    if first.starts_with("#cloud-config") {
        "text/cloud-config"
    } else if first.starts_with("#!") {
        "text/x-shellscript"
    } else if first.starts_with("#include") {
        "text/x-include-url"
    } else if first.starts_with("#cloud-boothook") {
        "text/cloud-boothook"
    } else {
        "text/plain"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const KEY: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl owner@laptop";

    fn contract(fields: serde_json::Value) -> Contract {
        let mut value = json!({"name": "web", "state": "requested"});
        if let (serde_json::Value::Object(base), serde_json::Value::Object(more)) =
            (&mut value, fields)
        {
            base.extend(more);
        }
        serde_json::from_value(value).expect("a contract")
    }

    #[test]
    fn keys_alone_become_a_cloud_config() {
        let mut problems = Vec::new();
        let data = user_data(
            &contract(json!({"sshAuthorizedKeys": [KEY]})),
            &mut problems,
        );
        assert_eq!(problems, vec![]);
        assert_eq!(
            data,
            format!("#cloud-config\nssh_authorized_keys:\n  - \"{KEY}\"\n")
        );
    }

    #[test]
    fn keys_beside_user_data_become_a_two_part_archive_with_the_script_intact() {
        let script = "#!/bin/sh\necho hello > /tmp/hello\n";
        let fields = json!({"sshAuthorizedKeys": [KEY], "userData": script});
        let mut problems = Vec::new();
        let data = user_data(&contract(fields.clone()), &mut problems);
        assert_eq!(problems, vec![]);
        assert!(data.starts_with("Content-Type: multipart/mixed; boundary=\"==swdesk-"));
        assert!(data.contains("Content-Type: text/cloud-config"));
        assert!(data.contains("Content-Type: text/x-shellscript"));
        assert!(data.contains(script), "the script is carried as written");
        assert!(data.contains(KEY));
        assert_eq!(
            data,
            user_data(&contract(fields), &mut Vec::new()),
            "the same contract composes the same user_data"
        );
    }

    #[test]
    fn without_keys_user_data_is_carried_as_declared() {
        let mut problems = Vec::new();
        let data = user_data(
            &contract(json!({"userData": "#cloud-config\n{}\n"})),
            &mut problems,
        );
        assert_eq!(data, "#cloud-config\n{}\n");
        assert_eq!(problems, vec![]);
    }

    #[test]
    fn a_key_that_is_not_one_is_refused_at_its_index_and_nothing_is_injected() {
        let injected = format!("{KEY}\nruncmd:\n  - rm -rf /");
        let keys = json!([KEY, "not a key", injected, "ssh-ed25519"]);
        let mut problems = Vec::new();
        user_data(&contract(json!({"sshAuthorizedKeys": keys})), &mut problems);
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/sshAuthorizedKeys/1",
                "/sshAuthorizedKeys/2",
                "/sshAuthorizedKeys/3"
            ]
        );
        assert!(problems[1].message.contains("line break"), "{problems:?}");
    }

    #[test]
    fn every_field_the_market_cannot_carry_is_named_with_what_to_do() {
        let fields = json!({
            "vmName": "web-1",
            "tunnels": [{"tag": "http", "port": 8080}],
            "agent": {},
            "association": {"fromGuest": true},
            "guestTools": ["kubectl"],
        });
        let problems = not_carried(&contract(fields));
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/vmName",
                "/tunnels",
                "/agent",
                "/association",
                "/guestTools"
            ]
        );
        assert!(problems.iter().all(|p| !p.fix.is_empty()));
        assert_eq!(not_carried(&contract(json!({"tunnels": []}))), vec![]);
    }
}

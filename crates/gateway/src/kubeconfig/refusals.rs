//! What a gateway may not put in a kubeconfig the app saves, named field by field: anything
//! that runs code or reads files when the owner next uses `kubectl` (`exec`, `auth-provider`,
//! token and certificate files), anything that weakens or reroutes TLS (`proxy-url`,
//! `insecure-skip-tls-verify`, a CA file), credentials of another kind (tokens, passwords,
//! impersonation), and more than one cluster, user or context (a second context made current
//! would send the owner's commands elsewhere). The server must be an `https` URL.
//!
//! Every problem is named at once, by its field and in the app's own words; the answer's
//! values are never quoted (they may hold a key).

use serde_json::{Map, Value};

/// Fields of `clusters[0].cluster` the app refuses, with what each would do.
const CLUSTER_FIELDS: &[(&str, &str)] = &[
    ("proxy-url", "a proxy every request would pass through"),
    ("certificate-authority", "a CA file on this machine"),
];

/// Fields of `users[0].user` the app refuses, with what each would do.
const USER_FIELDS: &[(&str, &str)] = &[
    ("exec", "a program kubectl would run"),
    ("auth-provider", "an auth provider plugin kubectl would run"),
    ("token", "a bearer token instead of the client certificate"),
    ("tokenFile", "a token file on this machine"),
    ("username", "a password login"),
    ("password", "a password login"),
    ("client-certificate", "a certificate file on this machine"),
    ("client-key", "a key file on this machine"),
    ("as", "impersonation of another user"),
    ("as-uid", "impersonation of another user"),
    ("as-groups", "impersonation of groups"),
    ("as-user-extra", "impersonation extras"),
];

/// Every reason to refuse `document` (a kubeconfig read as data); empty when none.
pub(super) fn refusals(document: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let cluster = only_one(document, "clusters", &mut problems);
    let user = only_one(document, "users", &mut problems);
    let context = only_one(document, "contexts", &mut problems);
    if let Some(fields) = cluster.and_then(|entry| fields_of(entry, "cluster")) {
        refuse_fields(fields, "clusters[0].cluster", CLUSTER_FIELDS, &mut problems);
        if fields.get("insecure-skip-tls-verify") == Some(&Value::Bool(true)) {
            problems
                .push("clusters[0].cluster.insecure-skip-tls-verify: skipped TLS checks".into());
        }
        if !is_https(fields.get("server")) {
            problems.push("clusters[0].cluster.server: not an https URL".into());
        }
    }
    if let Some(fields) = user.and_then(|entry| fields_of(entry, "user")) {
        refuse_fields(fields, "users[0].user", USER_FIELDS, &mut problems);
    }
    check_context(document, [cluster, user, context], &mut problems);
    problems
}

/// The one entry of the list `key`: a problem when it holds more than one, or is no list.
fn only_one<'a>(document: &'a Value, key: &str, problems: &mut Vec<String>) -> Option<&'a Value> {
    match document.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::Array(entries)) if entries.len() <= 1 => entries.first(),
        Some(Value::Array(entries)) => {
            problems.push(format!("{key}: {} entries (one is allowed)", entries.len()));
            entries.first()
        }
        Some(_) => {
            problems.push(format!("{key}: not a list"));
            None
        }
    }
}

fn fields_of<'a>(entry: &'a Value, key: &str) -> Option<&'a Map<String, Value>> {
    entry.get(key).and_then(Value::as_object)
}

fn refuse_fields(
    fields: &Map<String, Value>,
    at: &str,
    refused: &[(&str, &str)],
    problems: &mut Vec<String>,
) {
    for (name, what) in refused {
        if fields.get(*name).is_some_and(|value| !value.is_null()) {
            problems.push(format!("{at}.{name}: {what}"));
        }
    }
}

fn is_https(server: Option<&Value>) -> bool {
    server
        .and_then(Value::as_str)
        .and_then(|text| url::Url::parse(text).ok())
        .is_some_and(|url| {
            url.scheme() == "https"
                && url.host().is_some()
                && url.username().is_empty()
                && url.password().is_none()
        })
}

/// The context names the one cluster and user, and the current context is that context.
fn check_context(
    document: &Value,
    [cluster, user, context]: [Option<&Value>; 3],
    problems: &mut Vec<String>,
) {
    if let Some(fields) = context.and_then(|entry| fields_of(entry, "context")) {
        for (key, entry) in [("cluster", cluster), ("user", user)] {
            let named = fields.get(key).and_then(Value::as_str);
            if named.is_some() && named != name_of(entry) {
                problems.push(format!("contexts[0].context.{key}: names another {key}"));
            }
        }
    }
    let current = document.get("current-context").and_then(Value::as_str);
    if current.is_some_and(|current| !current.is_empty()) && current != name_of(context) {
        problems.push("current-context: names another context".into());
    }
}

fn name_of(entry: Option<&Value>) -> Option<&str> {
    entry
        .and_then(|entry| entry.get("name"))
        .and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    fn honest() -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "c", "cluster": {"server": "https://c.example:6443", "certificate-authority-data": "x"}}],
            "users": [{"name": "u", "user": {"client-certificate-data": "x", "client-key-data": "y"}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "c",
        })
    }

    #[test]
    fn an_honest_kubeconfig_has_nothing_refused() {
        assert_eq!(refusals(&honest()), Vec::<String>::new());
    }

    #[test]
    fn every_hostile_field_is_named_at_once() {
        let mut document = honest();
        document["users"][0]["user"]["exec"] = json!({"command": "sh"});
        document["users"][0]["user"]["auth-provider"] = json!({"name": "x"});
        document["users"][0]["user"]["tokenFile"] = json!("/etc/shadow");
        document["clusters"][0]["cluster"]["proxy-url"] = json!("socks5://evil:1080");
        document["clusters"][0]["cluster"]["insecure-skip-tls-verify"] = json!(true);
        document["contexts"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "evil", "context": {"cluster": "c", "user": "u"}}));
        document["current-context"] = json!("evil");
        let problems = refusals(&document);
        for field in [
            "users[0].user.exec",
            "users[0].user.auth-provider",
            "users[0].user.tokenFile",
            "clusters[0].cluster.proxy-url",
            "clusters[0].cluster.insecure-skip-tls-verify",
            "contexts: 2 entries",
            "current-context",
        ] {
            assert!(
                problems.iter().any(|problem| problem.starts_with(field)),
                "{field} named in {problems:?}"
            );
        }
        assert!(
            !problems.join(" ").contains("/etc/shadow"),
            "values are never quoted"
        );
    }

    #[test]
    fn the_server_must_be_https_without_credentials() {
        for server in [
            "http://c.example",
            "https://user:pw@c.example",
            "c.example:6443",
            "",
        ] {
            let mut document = honest();
            document["clusters"][0]["cluster"]["server"] = json!(server);
            assert_eq!(
                refusals(&document),
                ["clusters[0].cluster.server: not an https URL"],
                "{server}"
            );
        }
    }

    #[test]
    fn tls_checks_kept_on_and_contexts_pointing_elsewhere_are_told_apart() {
        let mut document = honest();
        document["clusters"][0]["cluster"]["insecure-skip-tls-verify"] = json!(false);
        assert!(
            refusals(&document).is_empty(),
            "an explicit false skips nothing"
        );
        document["contexts"][0]["context"]["user"] = json!("someone-else");
        assert_eq!(
            refusals(&document),
            ["contexts[0].context.user: names another user"]
        );
    }
}

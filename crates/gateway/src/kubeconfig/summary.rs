//! What the app shows of a kubeconfig (server, cluster name, the client certificate's subject
//! and validity window), read with standard parsers (YAML, X.509) so an expiry countdown never
//! guesses; one whose client certificate is not signed by the cluster CA it carries, or that
//! holds no client key, is refused. The text is parsed once ([`document`]); `minimal` checks
//! that one document for refusals and [`read`] reads it, handing the verified PEM blocks to the
//! one place that writes a kubeconfig.
//!
//! Invariant: the kubeconfig's text is never logged or put in an error message.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use x509_parser::pem::Pem;

use super::error::KubeconfigError;

/// What the app shows of a kubeconfig.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// The current context's cluster name.
    pub cluster: String,
    /// The API server URL.
    pub server: String,
    /// The client certificate's subject common name.
    pub subject: String,
    /// Its issuer's common name.
    pub issuer: String,
    /// Valid from (Unix seconds).
    pub not_before: i64,
    /// Valid until (Unix seconds).
    pub not_after: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct File {
    clusters: Vec<NamedCluster>,
    users: Vec<NamedUser>,
    #[serde(default, deserialize_with = "optional_scalar_text")]
    current_context: Option<String>,
}

#[derive(Deserialize)]
struct NamedCluster {
    #[serde(deserialize_with = "scalar_text")]
    name: String,
    cluster: ClusterFields,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct ClusterFields {
    #[serde(deserialize_with = "scalar_text")]
    server: String,
    certificate_authority_data: Option<String>,
}

#[derive(Deserialize)]
struct NamedUser {
    user: UserFields,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct UserFields {
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
}

/// The PEM blocks of a kubeconfig that [`read`] verified: the cluster CA, the client
/// certificate it signed, and the client key. `Debug` shows none of them.
pub(super) struct Credentials {
    pub(super) authority: Pem,
    pub(super) certificate: Pem,
    pub(super) key: Pem,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Credentials(..)")
    }
}

impl Summary {
    /// Reads `text` and checks it may be saved at `now` (Unix seconds): it parses, its client
    /// certificate is the cluster CA's, and it has not expired.
    pub fn verify(text: &str, now: i64) -> Result<Self, KubeconfigError> {
        let summary = Self::parse(text)?;
        if summary.not_after <= now {
            return Err(KubeconfigError::Expired(summary.not_after));
        }
        Ok(summary)
    }

    /// Reads a kubeconfig's first cluster and user.
    pub fn parse(text: &str) -> Result<Self, KubeconfigError> {
        read(&document(text)?).map(|(summary, _)| summary)
    }
}

/// A kubeconfig's text parsed as YAML into data, the one parse of it.
pub(super) fn document(text: &str) -> Result<Value, KubeconfigError> {
    serde_saphyr::from_str(text).map_err(|error| KubeconfigError::Yaml(yaml_problem(&error)))
}

/// Reads a kubeconfig's first cluster and user from its `document`: what the app shows of it,
/// and the PEM blocks it verified (the client certificate signed by the CA, a private key
/// beside it).
pub(super) fn read(document: &Value) -> Result<(Summary, Credentials), KubeconfigError> {
    // The deserializer's message may quote a value (a key, written where a name belongs).
    let file = File::deserialize(document)
        .map_err(|_| KubeconfigError::Yaml("a field is missing or not of its kind".to_owned()))?;
    let cluster = file
        .clusters
        .first()
        .ok_or(KubeconfigError::Missing("cluster"))?;
    let user = file.users.first().ok_or(KubeconfigError::Missing("user"))?;
    let credentials = Credentials {
        authority: pem_of(field(
            &cluster.cluster.certificate_authority_data,
            "certificate authority",
        )?)?,
        certificate: pem_of(field(
            &user.user.client_certificate_data,
            "client certificate",
        )?)?,
        key: key_of(field(&user.user.client_key_data, "client key")?)?,
    };
    let client = certificate_of(&credentials.certificate)?;
    let authority = certificate_of(&credentials.authority)?;
    client
        .verify_signature(Some(authority.public_key()))
        .map_err(|_| KubeconfigError::Untrusted)?;
    let summary = Summary {
        cluster: file
            .current_context
            .clone()
            .unwrap_or_else(|| cluster.name.clone()),
        server: cluster.cluster.server.clone(),
        subject: common_name(client.subject()),
        issuer: common_name(client.issuer()),
        not_before: client.validity().not_before.timestamp(),
        not_after: client.validity().not_after.timestamp(),
    };
    Ok((summary, credentials))
}

/// A scalar as text, as a direct parse into text took it: YAML reads `name: 123` as a number
/// where a kubeconfig means text. A boolean reads as `true` or `false`, however it was spelt.
fn scalar_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    optional_scalar_text(deserializer)?.ok_or_else(|| D::Error::custom("no text"))
}

/// [`scalar_text`], or none where the field is null.
fn optional_scalar_text<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::Null => Ok(None),
        Value::String(text) => Ok(Some(text)),
        Value::Number(number) => Ok(Some(number.to_string())),
        Value::Bool(flag) => Ok(Some(flag.to_string())),
        Value::Array(_) | Value::Object(_) => Err(D::Error::custom("not a scalar")),
    }
}

fn field<'a>(value: &'a Option<String>, what: &'static str) -> Result<&'a str, KubeconfigError> {
    value
        .as_deref()
        .filter(|data| !data.trim().is_empty())
        .ok_or(KubeconfigError::Missing(what))
}

/// The client key: one PEM block whose label names a private key.
fn key_of(data: &str) -> Result<Pem, KubeconfigError> {
    let pem = pem_of(data)?;
    if !pem.label.ends_with("PRIVATE KEY") {
        return Err(KubeconfigError::Certificate(
            "the client key is not a PEM private key".to_owned(),
        ));
    }
    Ok(pem)
}

/// Where the YAML breaks, never what it says there: the parser's own message quotes the lines
/// around the error, and those may hold the client key.
fn yaml_problem(error: &serde_saphyr::Error) -> String {
    match error.location() {
        Some(at) => format!("it is not valid YAML (line {})", at.line()),
        None => "it is not valid YAML".to_owned(),
    }
}

fn pem_of(data: &str) -> Result<Pem, KubeconfigError> {
    let bytes = STANDARD
        .decode(data.trim())
        .map_err(|e| KubeconfigError::Certificate(e.to_string()))?;
    let (_, pem) = x509_parser::pem::parse_x509_pem(&bytes)
        .map_err(|e| KubeconfigError::Certificate(e.to_string()))?;
    Ok(pem)
}

fn certificate_of(
    pem: &Pem,
) -> Result<x509_parser::certificate::X509Certificate<'_>, KubeconfigError> {
    pem.parse_x509()
        .map_err(|e| KubeconfigError::Certificate(e.to_string()))
}

fn common_name(name: &x509_parser::x509::X509Name<'_>) -> String {
    name.iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok())
        .unwrap_or_default()
        .to_owned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn names_written_as_numbers_or_booleans_are_read_as_their_text() {
        let text = "clusters:\n- name: 123\n  cluster:\n    server: https://c.example\n\
                    users: []\ncurrent-context: 456\n";
        let file = File::deserialize(&document(text).unwrap()).unwrap();
        assert_eq!(file.clusters[0].name, "123");
        assert_eq!(file.current_context.as_deref(), Some("456"));
    }

    #[test]
    fn a_field_of_the_wrong_kind_is_refused_without_quoting_its_value() {
        let key = "c2VjcmV0LWtleS1tYXRlcmlhbC1vbmUtdHdvLXRocmVlLWZvdXI";
        let text = format!("clusters:\n- name: c\n  cluster: {key}\nusers: []\n");
        let error = Summary::parse(&text).unwrap_err();
        assert!(
            matches!(error, KubeconfigError::Yaml(_)),
            "refused as not a kubeconfig: {error}"
        );
        assert!(!error.to_string().contains(&key[..16]), "{error}");
    }
}

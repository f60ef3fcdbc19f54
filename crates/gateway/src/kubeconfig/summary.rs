//! What the app shows of a kubeconfig (server, cluster name, the client certificate's subject
//! and validity window), read with standard parsers (YAML, X.509) so an expiry countdown never
//! guesses; one whose client certificate is not signed by the cluster CA it carries, or that
//! holds no client key, is refused. [`read`] also hands the verified PEM blocks to the one
//! place that writes a kubeconfig (`minimal`).
//!
//! Invariant: the kubeconfig's text is never logged or put in an error message.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
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
    current_context: Option<String>,
}

#[derive(Deserialize)]
struct NamedCluster {
    name: String,
    cluster: ClusterFields,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct ClusterFields {
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
        read(text).map(|(summary, _)| summary)
    }
}

/// Reads a kubeconfig's first cluster and user: what the app shows of it, and the PEM blocks
/// it verified (the client certificate signed by the CA, a private key beside it).
pub(super) fn read(text: &str) -> Result<(Summary, Credentials), KubeconfigError> {
    let file: File = serde_saphyr::from_str(text)
        .map_err(|error| KubeconfigError::Yaml(yaml_problem(&error)))?;
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
pub(super) fn yaml_problem(error: &serde_saphyr::Error) -> String {
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

//! Kubeconfigs on the owner's machine: [`save`] writes one with mode 0600 (it holds a client
//! key), replacing any file at the path atomically; [`Summary::parse`] reads what the app shows
//! of one (server, cluster name, the client certificate's subject and validity window) with
//! standard parsers (YAML, X.509), so an expiry countdown never guesses, and refuses one whose
//! client certificate is not signed by the cluster CA it carries.
//!
//! Invariant: the kubeconfig's text is never logged or put in an error message.

use std::io::Write as _;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use swdesk_lexicon::Redacted;

/// Writes `kubeconfig` at `path` readable by the owner only (0600 on Unix).
pub fn save(path: &Path, kubeconfig: &Redacted<String>) -> std::io::Result<()> {
    let directory = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("the path names no file"))?;
    let temporary = directory.join(format!(
        ".{}.tmp-{}",
        file_name.to_string_lossy(),
        std::process::id()
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temporary)?;
    file.write_all(kubeconfig.expose().as_bytes())?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&temporary, path)
}

/// Why a kubeconfig could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KubeconfigError {
    /// Not a kubeconfig YAML.
    #[error("not a kubeconfig: {0}")]
    Yaml(String),
    /// A field is missing.
    #[error("the kubeconfig has no {0}")]
    Missing(&'static str),
    /// A certificate is not a PEM X.509 certificate.
    #[error("a certificate is not readable: {0}")]
    Certificate(String),
    /// The client certificate is not signed by the kubeconfig's cluster CA.
    #[error("the client certificate is not signed by the cluster's certificate authority")]
    Untrusted,
}

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
}

impl Summary {
    /// Reads a kubeconfig's first cluster and user.
    pub fn parse(text: &str) -> Result<Self, KubeconfigError> {
        let file: File = serde_saphyr::from_str(text)
            .map_err(|error| KubeconfigError::Yaml(yaml_problem(&error)))?;
        let cluster = file
            .clusters
            .first()
            .ok_or(KubeconfigError::Missing("cluster"))?;
        let client_data = file
            .users
            .first()
            .and_then(|u| u.user.client_certificate_data.as_deref())
            .ok_or(KubeconfigError::Missing("client certificate"))?;
        let ca_data = cluster
            .cluster
            .certificate_authority_data
            .as_deref()
            .ok_or(KubeconfigError::Missing("certificate authority"))?;
        let (client_pem, ca_pem) = (pem_of(client_data)?, pem_of(ca_data)?);
        let client = certificate_of(&client_pem)?;
        let authority = certificate_of(&ca_pem)?;
        client
            .verify_signature(Some(authority.public_key()))
            .map_err(|_| KubeconfigError::Untrusted)?;
        Ok(Self {
            cluster: file.current_context.unwrap_or_else(|| cluster.name.clone()),
            server: cluster.cluster.server.clone(),
            subject: common_name(client.subject()),
            issuer: common_name(client.issuer()),
            not_before: client.validity().not_before.timestamp(),
            not_after: client.validity().not_after.timestamp(),
        })
    }
}

/// Where the YAML breaks, never what it says there: the parser's own message quotes the lines
/// around the error, and those may hold the client key.
fn yaml_problem(error: &serde_saphyr::Error) -> String {
    match error.location() {
        Some(at) => format!("it is not valid YAML (line {})", at.line()),
        None => "it is not valid YAML".to_owned(),
    }
}

fn pem_of(data: &str) -> Result<x509_parser::pem::Pem, KubeconfigError> {
    let bytes = STANDARD
        .decode(data.trim())
        .map_err(|e| KubeconfigError::Certificate(e.to_string()))?;
    let (_, pem) = x509_parser::pem::parse_x509_pem(&bytes)
        .map_err(|e| KubeconfigError::Certificate(e.to_string()))?;
    Ok(pem)
}

fn certificate_of(
    pem: &x509_parser::pem::Pem,
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

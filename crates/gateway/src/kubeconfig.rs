//! Kubeconfigs on the owner's machine: [`Summary::parse`] reads what the app shows of one
//! (server, cluster name, the client certificate's subject and validity window) with standard
//! parsers (YAML, X.509), so an expiry countdown never guesses, and refuses one whose client
//! certificate is not signed by the cluster CA it carries or that holds no client key;
//! [`save`] writes one with mode 0600 (it holds a client key) through [`write_private`]: into a
//! temporary file of an unpredictable name in the target folder, synced, then renamed over the
//! path, and the folder synced, so the path holds the old file or the whole new one, never a
//! part.
//!
//! Invariant: the kubeconfig's text is never logged or put in an error message; a kubeconfig
//! is verified ([`Summary::parse`], not expired) before anything is written.

use std::io::Write as _;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use swdesk_lexicon::Redacted;

/// Writes `kubeconfig` at `path` readable by the owner only (0600 on Unix), atomically.
pub fn save(path: &Path, kubeconfig: &Redacted<String>) -> std::io::Result<()> {
    write_private(path, kubeconfig.expose().as_bytes())
}

/// Writes `bytes` at `path` as a file only its owner reads (0600 on Unix), whole or not at
/// all: a temporary file of an unpredictable name in the same folder, synced, renamed over
/// `path`, the folder synced.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let directory = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if path.file_name().is_none() {
        return Err(std::io::Error::other("the path names no file"));
    }
    // `tempfile` creates the file with a random name, exclusively, readable by the owner only.
    let mut file = tempfile::Builder::new()
        .prefix(".swdesk-")
        .tempfile_in(directory)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|error| error.error)?;
    #[cfg(unix)]
    std::fs::File::open(directory)?.sync_all()?;
    Ok(())
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
    /// The client certificate's validity ended.
    #[error("the client certificate expired at {0} (Unix seconds)")]
    Expired(i64),
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
    client_key_data: Option<String>,
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
        let file: File = serde_saphyr::from_str(text)
            .map_err(|error| KubeconfigError::Yaml(yaml_problem(&error)))?;
        let cluster = file
            .clusters
            .first()
            .ok_or(KubeconfigError::Missing("cluster"))?;
        let user = file.users.first().ok_or(KubeconfigError::Missing("user"))?;
        let client_data = user
            .user
            .client_certificate_data
            .as_deref()
            .ok_or(KubeconfigError::Missing("client certificate"))?;
        if user
            .user
            .client_key_data
            .as_deref()
            .is_none_or(str::is_empty)
        {
            return Err(KubeconfigError::Missing("client key"));
        }
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

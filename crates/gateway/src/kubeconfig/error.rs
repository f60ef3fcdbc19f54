//! Why a kubeconfig was not read or not saved. No variant carries the kubeconfig's text, a
//! certificate or a key: only field names, parser positions and the app's own words.

/// Why a kubeconfig could not be read, or was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KubeconfigError {
    /// Not a kubeconfig YAML.
    #[error("not a kubeconfig: {0}")]
    Yaml(String),
    /// A field is missing.
    #[error("the kubeconfig has no {0}")]
    Missing(&'static str),
    /// A certificate or the key is not a PEM block of its kind.
    #[error("a certificate is not readable: {0}")]
    Certificate(String),
    /// The client certificate is not signed by the kubeconfig's cluster CA.
    #[error("the client certificate is not signed by the cluster's certificate authority")]
    Untrusted,
    /// The client certificate's validity ended.
    #[error("the client certificate expired at {0} (Unix seconds)")]
    Expired(i64),
    /// The gateway's answer asks for what the app never writes into a kubeconfig (a program to
    /// run, a proxy, skipped TLS checks, files of this machine, more than one of a kind): each
    /// thing refused, by its field.
    #[error("the kubeconfig asks for what the app never saves: {}", .0.join("; "))]
    Refused(Vec<String>),
}

//! Kubeconfigs on the owner's machine. A gateway's answer is never saved as it came: it is
//! read ([`Summary`]: server, cluster, the client certificate's subject and validity, checked
//! against the cluster CA), refused when it asks for anything that would run code, read files
//! or weaken TLS when the owner next uses `kubectl` (`refusals`), and rebuilt from the verified
//! fields into a minimal kubeconfig ([`Minimal`]). [`save`] writes one with mode 0600 (it holds
//! a client key), whole or not at all (`swdesk_files`).
//!
//! Invariant: the kubeconfig's text is never logged or put in an error message; a kubeconfig
//! is verified and rebuilt before anything is written.

mod error;
mod minimal;
mod refusals;
mod summary;

use std::path::Path;

use swdesk_lexicon::Redacted;

pub use error::KubeconfigError;
pub use minimal::{Minimal, Parts};
pub use summary::Summary;

/// Writes `kubeconfig` at `path` readable by the owner only (0600 on Unix), atomically
/// (`swdesk_files::write_private`).
pub fn save(path: &Path, kubeconfig: &Redacted<String>) -> std::io::Result<()> {
    swdesk_files::write_private(path, kubeconfig.expose().as_bytes())
}

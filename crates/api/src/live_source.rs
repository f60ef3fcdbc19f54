//! Where the owner's repo is followed live: their own PDS (the default), or a service the
//! owner names in Settings (a relay, or another PDS carrying their repo) that serves
//! `com.atproto.sync.subscribeRepos`. Jetstream's JSON stream is not read: a Jetstream URL
//! would be refused by the stream's first frame, and the app polls meanwhile.
//!
//! The URL is the owner's choice, kept in the profile's settings (`settings.json` in the data
//! directory, beside the accounts' stores), and checked by the outbound policy of the network
//! before it is kept and again at every start: a URL the policy refuses (plain `http` to a
//! remote host, a loopback port the network does not name, credentials in it) is never kept
//! and never followed. Every commit it carries is verified against the owner's key as one
//! from the PDS is, so a relay is trusted with nothing but timeliness.
//!
//! Invariants: each source keeps its own cursor (a relay's sequence numbers are not the PDS's;
//! [`LiveSource::stream`]), so switching starts the new source with one listing and never
//! resumes from another's position; an empty URL is the PDS.

use std::path::{Path, PathBuf};

use swdesk_net::NetPolicy;
use url::Url;

use crate::private_json;

/// The name the cursor of the owner's PDS's `subscribeRepos` is kept under in the store (a
/// relay's is this, `@` its URL).
pub const OWNER_STREAM: &str = "subscribeRepos:owner";

/// The profile's settings file, in its data directory.
const SETTINGS_FILE: &str = "settings.json";
/// The longest URL kept.
const MAX_URL: usize = 512;

/// Where the owner's repo is followed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum LiveSource {
    /// The owner's own PDS, found from their DID document.
    #[default]
    Pds,
    /// A service the owner named (its root URL; the stream is at `/xrpc/…subscribeRepos`).
    Service(Url),
}

/// The URL the owner typed was refused; every problem is named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("this URL cannot be followed: {}", .problems.join("; "))]
pub struct LiveSourceRefused {
    /// Each problem, in words.
    pub problems: Vec<String>,
}

impl LiveSource {
    /// The source `text` names, checked against `policy`: empty is the PDS; otherwise an
    /// `https`/`wss` root URL (or `http`/`ws` to a loopback service the network names).
    pub fn parse(text: &str, policy: &NetPolicy) -> Result<Self, LiveSourceRefused> {
        let text = text.trim();
        if text.is_empty() {
            return Ok(Self::Pds);
        }
        let refused = |problems: Vec<String>| Err(LiveSourceRefused { problems });
        if text.len() > MAX_URL {
            return refused(vec![format!("it is longer than {MAX_URL} characters")]);
        }
        let url = match Url::parse(text) {
            Ok(url) => url,
            Err(error) => return refused(vec![format!("it is not a URL ({error})")]),
        };
        let mut problems = Vec::new();
        if !matches!(url.scheme(), "https" | "wss" | "http" | "ws") {
            problems.push(format!(
                "it is {}:, not https: or wss: (a relay's address)",
                url.scheme()
            ));
        } else if let Err(refused) = policy.check_url(&url) {
            problems.push(refused.reason);
        }
        if !matches!(url.path(), "" | "/") {
            problems.push(format!(
                "it has a path ({}): give the service's address alone; the app asks it for \
                 com.atproto.sync.subscribeRepos",
                swdesk_lexicon::text::peer_text(url.path(), 80)
            ));
        }
        if url.query().is_some() || url.fragment().is_some() {
            problems.push("it has a query or a fragment".to_owned());
        }
        if problems.is_empty() {
            Ok(Self::Service(url))
        } else {
            refused(problems)
        }
    }

    /// The service followed instead of the PDS, if any.
    pub fn service(&self) -> Option<&Url> {
        match self {
            Self::Pds => None,
            Self::Service(url) => Some(url),
        }
    }

    /// The name this source's cursor is kept under in the store.
    pub fn stream(&self) -> String {
        match self {
            Self::Pds => OWNER_STREAM.to_owned(),
            Self::Service(url) => format!("{OWNER_STREAM}@{}", url.as_str()),
        }
    }
}

/// The profile's settings, as kept in its data directory.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Settings {
    /// The URL the owner's repo is followed at; none: their PDS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    live_source: Option<String>,
}

/// The profile's kept choice of live source, in its data directory.
#[derive(Debug, Clone)]
pub struct KeptLiveSource {
    file: PathBuf,
}

impl KeptLiveSource {
    /// The choice kept under `data_dir`.
    pub fn under(data_dir: &Path) -> Self {
        Self {
            file: data_dir.join(SETTINGS_FILE),
        }
    }

    /// The URL the owner gave, as kept (none: their PDS).
    pub fn url(&self) -> Option<String> {
        private_json::read::<Settings>(&self.file).and_then(|settings| settings.live_source)
    }

    /// The kept source, checked against `policy` again (the network may have changed since):
    /// one the policy refuses now is not followed; the PDS is, and the log says why.
    pub fn source(&self, policy: &NetPolicy) -> LiveSource {
        let Some(url) = self.url() else {
            return LiveSource::Pds;
        };
        LiveSource::parse(&url, policy).unwrap_or_else(|refused| {
            tracing::warn!(%refused, "the kept live source is refused now; following the PDS");
            LiveSource::Pds
        })
    }

    /// Keeps `source` (checked) as the profile's choice.
    pub fn keep(&self, source: &LiveSource) -> std::io::Result<()> {
        let mut settings = private_json::read::<Settings>(&self.file).unwrap_or_default();
        settings.live_source = source.service().map(|url| url.as_str().to_owned());
        private_json::write(&self.file, &settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox_policy() -> NetPolicy {
        NetPolicy::public().with_loopback_port(2583)
    }

    fn problems(text: &str) -> Vec<String> {
        LiveSource::parse(text, &sandbox_policy())
            .expect_err("refused")
            .problems
    }

    #[test]
    fn an_empty_url_is_the_pds_and_a_relay_or_a_named_loopback_service_is_followed() {
        let policy = sandbox_policy();
        assert_eq!(LiveSource::parse("  ", &policy), Ok(LiveSource::Pds));
        let relay = LiveSource::parse("wss://relay.example.com", &policy).unwrap();
        assert_eq!(
            relay.service().map(Url::as_str),
            Some("wss://relay.example.com/")
        );
        let sandbox = LiveSource::parse("http://localhost:2583/", &policy).unwrap();
        assert_eq!(
            sandbox.stream(),
            "subscribeRepos:owner@http://localhost:2583/"
        );
        assert_eq!(LiveSource::Pds.stream(), OWNER_STREAM);
    }

    #[test]
    fn a_url_the_policy_refuses_is_refused_naming_every_problem() {
        let plain = problems("http://relay.example.com/xrpc/x?cursor=1");
        assert_eq!(plain.len(), 3, "{plain:?}");
        assert!(plain[0].contains("only https"), "{plain:?}");
        assert!(plain[1].contains("has a path (/xrpc/x)"), "{plain:?}");
        assert!(plain[2].contains("query"), "{plain:?}");
        let unnamed = problems("http://localhost:9999");
        assert!(
            unnamed[0].contains("loopback address not named"),
            "{unnamed:?}"
        );
        let private = problems("https://10.0.0.2");
        assert!(private[0].contains("private"), "{private:?}");
        assert!(problems("ftp://relay.example.com")[0].contains("ftp:"));
        assert!(problems("relay.example.com")[0].contains("not a URL"));
        assert!(problems("https://user:pw@relay.example.com")[0].contains("credentials"));
        let long = format!("https://relay.example.com/{}", "a".repeat(600));
        assert!(problems(&long)[0].contains("longer than 512"));
    }

    #[test]
    fn the_choice_is_kept_in_the_profile_and_checked_again_when_read() {
        let data = tempfile::tempdir().unwrap();
        let kept = KeptLiveSource::under(data.path());
        assert_eq!(kept.url(), None);
        assert_eq!(kept.source(&sandbox_policy()), LiveSource::Pds);
        let sandbox = LiveSource::parse("http://localhost:2583", &sandbox_policy()).unwrap();
        kept.keep(&sandbox).unwrap();
        let again = KeptLiveSource::under(data.path());
        assert_eq!(again.url().as_deref(), Some("http://localhost:2583/"));
        assert_eq!(again.source(&sandbox_policy()), sandbox);
        assert_eq!(
            again.source(&NetPolicy::public()),
            LiveSource::Pds,
            "a network that no longer names the port follows the PDS"
        );
        kept.keep(&LiveSource::Pds).unwrap();
        assert_eq!(again.url(), None);
    }
}

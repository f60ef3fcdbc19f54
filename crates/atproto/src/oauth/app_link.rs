//! The app's own sign-in link, `computer.socialweb.desk:/oauth/callback`: the redirect URI of
//! the reverse-domain form atproto asks of a native app whose client id is hosted at
//! `desk.socialweb.computer`. The desktop opens such a link by launching the app with it; the
//! shell hands it here ([`AppLinks::deliver`]) and a sign-in waiting for it takes it.
//!
//! Invariants: a link is untrusted (any program on the machine can open one): it is bounded,
//! must be exactly a callback of this scheme, is taken only by the sign-in whose `state` it
//! carries (any other is dropped with a log line that never holds its query), and is never
//! kept once delivered.

use tokio::sync::broadcast;
use url::Url;

use super::loopback::Callback;

/// The app's URL scheme: its client id's host, reversed.
pub const APP_LINK_SCHEME: &str = "computer.socialweb.desk";
/// The redirect URI of a sign-in that returns through the app's link.
pub const APP_LINK_CALLBACK: &str = "computer.socialweb.desk:/oauth/callback";
/// The longest link taken (a callback carries a code, a state and an issuer).
const MAX_LINK: usize = 4 * 1024;
/// How many links may wait for a slow sign-in before the oldest are dropped.
const BACKLOG: usize = 8;

/// Whether a sign-in presenting the hosted `client_id` may return through the app's link: the
/// link's scheme must be the client id's host reversed (`desk.socialweb.computer`).
pub fn app_link_fits(client_id: &url::Url) -> bool {
    let reversed = client_id
        .host_str()
        .map(|host| host.rsplit('.').collect::<Vec<_>>().join("."));
    client_id.scheme() == "https" && reversed.as_deref() == Some(APP_LINK_SCHEME)
}

/// Why a link handed to the app was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppLinkError {
    /// Not a link of this app's scheme (or not a URL).
    #[error("not a link of this app ({APP_LINK_SCHEME}:)")]
    OtherScheme,
    /// Longer than any callback.
    #[error("the link is {0} bytes, longer than a sign-in callback ({MAX_LINK})")]
    TooLong(usize),
    /// This app's scheme, but not its sign-in callback.
    #[error("the link is not this app's sign-in callback ({APP_LINK_CALLBACK})")]
    NotACallback,
    /// No sign-in is waiting for one.
    #[error("no sign-in is waiting for this link")]
    NoSignIn,
}

/// The sign-in links the desktop handed to this app, for the sign-in waiting for one; clones
/// share one inbox.
#[derive(Debug, Clone)]
pub struct AppLinks {
    inbox: broadcast::Sender<Callback>,
}

impl Default for AppLinks {
    fn default() -> Self {
        Self::new()
    }
}

impl AppLinks {
    /// An inbox nobody waits on yet.
    pub fn new() -> Self {
        let (inbox, _) = broadcast::channel(BACKLOG);
        Self { inbox }
    }

    /// Whether `argument` (one of a launch's arguments) is a link of this app at all.
    pub fn is_app_link(argument: &str) -> bool {
        argument
            .get(..=APP_LINK_SCHEME.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(&format!("{APP_LINK_SCHEME}:")))
    }

    /// Hands `link` to the sign-in waiting for it.
    pub fn deliver(&self, link: &str) -> Result<(), AppLinkError> {
        let callback = parse(link)?;
        self.inbox
            .send(callback)
            .map(|_| ())
            .map_err(|_| AppLinkError::NoSignIn)
    }

    /// A receiver of every link delivered from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Callback> {
        self.inbox.subscribe()
    }
}

/// `link` as a callback, when it is exactly this app's sign-in callback.
fn parse(link: &str) -> Result<Callback, AppLinkError> {
    if !AppLinks::is_app_link(link) {
        return Err(AppLinkError::OtherScheme);
    }
    if link.len() > MAX_LINK {
        return Err(AppLinkError::TooLong(link.len()));
    }
    let url = Url::parse(link).map_err(|_| AppLinkError::NotACallback)?;
    let expected = Url::parse(APP_LINK_CALLBACK).expect("a constant URL");
    let same_place = url.scheme() == expected.scheme()
        && url.host().is_none()
        && url.path() == expected.path()
        && url.fragment().is_none();
    if !same_place {
        return Err(AppLinkError::NotACallback);
    }
    Ok(Callback::from_url(&url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_callback_of_this_scheme_is_taken() {
        let good = "computer.socialweb.desk:/oauth/callback?code=c&state=s&iss=https%3A%2F%2Fpds";
        let callback = parse(good).unwrap();
        assert_eq!(callback.get("code"), Some("c"));
        assert_eq!(callback.get("iss"), Some("https://pds"));
        assert!(parse("COMPUTER.SOCIALWEB.DESK:/oauth/callback?code=c").is_ok());
        for (link, why) in [
            (
                "https://desk.socialweb.computer/oauth/callback?code=c",
                AppLinkError::OtherScheme,
            ),
            (
                "computer.socialweb.deskx:/oauth/callback",
                AppLinkError::OtherScheme,
            ),
            (
                "computer.socialweb.desk:/other?code=c",
                AppLinkError::NotACallback,
            ),
            (
                "computer.socialweb.desk://host/oauth/callback?code=c",
                AppLinkError::NotACallback,
            ),
            (
                "computer.socialweb.desk:/oauth/callback#code=c",
                AppLinkError::NotACallback,
            ),
        ] {
            assert_eq!(parse(link).unwrap_err(), why, "{link}");
        }
        let long = format!("{APP_LINK_CALLBACK}?code={}", "a".repeat(MAX_LINK));
        assert!(matches!(parse(&long), Err(AppLinkError::TooLong(_))));
    }

    #[test]
    fn the_link_fits_only_the_client_id_whose_host_it_reverses() {
        let fits = |text: &str| app_link_fits(&Url::parse(text).unwrap());
        assert!(fits(
            "https://desk.socialweb.computer/oauth-client-metadata.json"
        ));
        assert!(!fits(
            "https://other.example.org/oauth-client-metadata.json"
        ));
        assert!(!fits(
            "http://desk.socialweb.computer/oauth-client-metadata.json"
        ));
    }

    #[tokio::test]
    async fn a_link_reaches_the_sign_in_waiting_and_none_is_kept_without_one() {
        let links = AppLinks::new();
        let link = format!("{APP_LINK_CALLBACK}?code=c&state=s");
        assert_eq!(links.deliver(&link), Err(AppLinkError::NoSignIn));
        let mut waiting = links.subscribe();
        links.deliver(&link).unwrap();
        assert_eq!(waiting.recv().await.unwrap().get("state"), Some("s"));
        assert!(waiting.try_recv().is_err(), "delivered once");
    }
}

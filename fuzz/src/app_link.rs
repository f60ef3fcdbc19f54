//! `app_link`: a link the desktop hands the app (`computer.socialweb.desk:/oauth/callback?…`),
//! which any program on the machine can open, through `swdesk_atproto::oauth::AppLinks::deliver`
//! (the link's parse: scheme, size, exact callback place) with no sign-in waiting, and
//! `app_link_fits` for the input read as a client id.
//!
//! Invariants:
//! - `is_app_link` holds exactly for a text starting with the scheme and `:` in any case, and a
//!   text that is not one is refused as of another scheme;
//! - a link taken (with no sign-in waiting: `NoSignIn`) is at most 4 KiB and is a URL of this
//!   scheme with no host, the callback's path and no fragment, and its query reaches the
//!   callback whole; a link refused as too long is longer than 4 KiB;
//! - a client id fits the app link only when it is `https` and its host reversed is the scheme.

use swdesk_atproto::oauth::app_link::app_link_fits;
use swdesk_atproto::oauth::{APP_LINK_SCHEME, AppLinkError, AppLinks, Callback};
use url::Url;

/// The longest link the app takes.
const MAX_LINK: usize = 4 * 1024;

pub fn check(data: &[u8]) {
    let link = crate::text(data);
    let prefix = format!("{APP_LINK_SCHEME}:");
    let has_scheme = link
        .get(..prefix.len())
        .is_some_and(|start| start.eq_ignore_ascii_case(&prefix));
    assert_eq!(AppLinks::is_app_link(&link), has_scheme, "{link:?}");
    let links = AppLinks::new();
    match links.deliver(&link) {
        Ok(()) => panic!("a link was delivered with no sign-in waiting"),
        Err(AppLinkError::OtherScheme) => assert!(!has_scheme, "refused its own scheme"),
        Err(AppLinkError::TooLong(length)) => {
            assert!(has_scheme && length == link.len() && length > MAX_LINK);
        }
        Err(AppLinkError::NotACallback) => assert!(has_scheme && link.len() <= MAX_LINK),
        Err(AppLinkError::NoSignIn) => taken(&link),
    }
    if let Ok(client_id) = Url::parse(&link) {
        if app_link_fits(&client_id) {
            assert_eq!(client_id.scheme(), "https");
            let host = client_id.host_str().unwrap_or_default();
            let reversed: Vec<&str> = host.rsplit('.').collect();
            assert_eq!(reversed.join("."), APP_LINK_SCHEME, "{host}");
        }
    }
}

/// A link the parse took: exactly the callback's place, its query whole.
fn taken(link: &str) {
    assert!(
        link.len() <= MAX_LINK,
        "a link of {} bytes was taken",
        link.len()
    );
    let url = Url::parse(link).expect("a taken link is a URL");
    assert_eq!(url.scheme(), APP_LINK_SCHEME);
    assert!(url.host().is_none(), "a taken link names a host: {link:?}");
    assert_eq!(url.path(), "/oauth/callback", "{link:?}");
    assert!(url.fragment().is_none(), "a taken link has a fragment");
    let callback = Callback::from_url(&url);
    for (name, value) in url.query_pairs() {
        assert!(
            callback.get(&name).is_some(),
            "{name} did not reach the callback"
        );
        let _ = value;
    }
}

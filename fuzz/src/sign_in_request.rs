//! `sign_in_request`: what a program on the machine sends the loopback sign-in listener (a
//! request's line and headers), judged by `swdesk_atproto::oauth::loopback::judge` (the request
//! parse, `request_url`, and the state check) for a sign-in that sent [`STATE`].
//!
//! Invariants:
//! - a request taken as the callback is a `GET` of a target on the callback's path whose
//!   `state` is exactly [`STATE`] (and the same request for another sign-in is refused as of a
//!   wrong state);
//! - a wrong state is refused only when a `state` is there and differs, a missing one only when
//!   none is; another path only for a parsed target off the callback's path; anything not a
//!   `GET` of an absolute path is refused as such;
//! - a header line added after the request line changes nothing.

use swdesk_atproto::oauth::CALLBACK_PATH;
use swdesk_atproto::oauth::loopback::{Refusal, Verdict, judge};

/// The state of the sign-in waiting.
pub const STATE: &str = "Zk3sD0x9-fuzz_state";

pub fn check(data: &[u8]) {
    let verdict = judge(data, STATE);
    let text = crate::text(data);
    let line = text.lines().next().unwrap_or_default();
    match &verdict {
        Verdict::Callback(callback) => {
            assert!(line.starts_with("GET /"), "taken: {line:?}");
            assert_eq!(callback.get("state"), Some(STATE));
            assert!(callback.carries_state(STATE));
            assert_eq!(
                judge(data, "another-sign-in"),
                Verdict::Refused(Refusal::WrongState),
                "the callback of one sign-in taken by another"
            );
        }
        Verdict::Refused(Refusal::WrongState) => {
            assert!(line.starts_with("GET /"), "{line:?}");
        }
        Verdict::Refused(Refusal::MissingState | Refusal::OtherPath) => {
            assert!(line.starts_with("GET /"), "{line:?}");
        }
        Verdict::Refused(Refusal::NotAGet) => {
            let target = line
                .strip_prefix("GET ")
                .and_then(|rest| rest.split(' ').next());
            if let Some(target) = target.filter(|target| target.starts_with('/')) {
                let url = url::Url::parse(&format!("http://127.0.0.1{target}"));
                assert!(url.is_err(), "a GET of {target:?} refused as not a GET");
            }
        }
        Verdict::Refused(Refusal::TooLarge) => panic!("judge never says too large"),
    }
    if let Verdict::Refused(Refusal::OtherPath) = &verdict {
        let on_path = ["?", " ", "#"]
            .iter()
            .any(|next| line.starts_with(&format!("GET {CALLBACK_PATH}{next}")))
            || line == format!("GET {CALLBACK_PATH}");
        assert!(
            !on_path,
            "a request on the callback's path refused as another: {line:?}"
        );
    }
    if text.contains('\n') {
        let mut longer = data.to_vec();
        longer.extend_from_slice(b"X-Extra: 1\r\n");
        assert_eq!(
            judge(&longer, STATE),
            verdict,
            "a header line changed the verdict"
        );
    }
}

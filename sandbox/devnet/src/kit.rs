//! What every test suite shares beside the sandbox itself: waiting, with a deadline, for
//! something that happens on its own time (a reconcile, a peer's answer, a guest's event), each
//! suite wrapping [`eventually`] with the deadline its parts need; and a sandbox PDS kept in a
//! directory, alone or behind a [`FaultProxy`] on its public port.

use std::path::Path;
use std::time::Duration;

use crate::{FaultProxy, SandboxPds, Storage};

/// How often a condition is looked at again.
const POLL: Duration = Duration::from_millis(50);

/// Polls `check` until it answers `Some`, and answers that; panics naming `what` once `within`
/// passed (on tokio's clock, so a suite on paused time waits no real time).
pub async fn eventually<T>(
    what: &str,
    within: Duration,
    mut check: impl AsyncFnMut() -> Option<T>,
) -> T {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} did not happen within {within:?}"
        );
        tokio::time::sleep(POLL).await;
    }
}

/// A free loopback port (free when asked; tests take it at once).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.local_addr().expect("its address").port()
}

/// Where a sandbox kept in `dir` lives, on free ports.
pub fn kept_storage(dir: &Path) -> Storage {
    Storage::Persistent {
        dir: dir.join("sandbox"),
        pds_port: free_port(),
        plc_port: free_port(),
    }
}

/// A sandbox PDS kept in `dir` with a [`FaultProxy`] on its public port: every client reaches
/// the PDS through the proxy (its DID documents name the public port), so a test can make the
/// PDS fail on a schedule.
pub async fn pds_behind_proxy(dir: &Path) -> (Storage, SandboxPds, FaultProxy) {
    let storage = kept_storage(dir);
    let Storage::Persistent { pds_port, .. } = storage else {
        unreachable!("a kept sandbox is persistent");
    };
    let listen_port = free_port();
    let proxy = FaultProxy::start(pds_port, listen_port)
        .await
        .expect("the fault proxy starts");
    let pds = SandboxPds::start_listening_on(&storage, listen_port, &[])
        .await
        .expect("the sandbox PDS starts");
    (storage, pds, proxy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn answers_once_the_check_holds_and_fails_naming_what_it_waited_for() {
        let mut looks = 0;
        let found = eventually("the third look", Duration::from_secs(1), async || {
            looks += 1;
            (looks == 3).then_some(looks)
        })
        .await;
        assert_eq!(found, 3);
        let never = tokio::spawn(eventually("never", Duration::from_secs(1), async || {
            None::<()>
        }));
        let panic = never.await.expect_err("it gives up").into_panic();
        let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert_eq!(message, "never did not happen within 1s");
    }
}

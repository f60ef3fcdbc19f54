//! Sandboxes a test keeps in a directory of its own (to stop and start again on the same data,
//! as a restart of the owner's machine would), alone or behind a [`FaultProxy`] on the PDS's
//! public port; and free loopback ports for them.

use std::path::Path;

pub use swdesk_devnet::ports::free_port;
use swdesk_devnet::{FaultProxy, SandboxPds, Storage};

/// Where a sandbox kept in `dir` lives, on free ports.
pub fn kept_storage(dir: &Path) -> Storage {
    Storage::Persistent {
        dir: dir.join("sandbox"),
        pds_port: free_port(),
        plc_port: free_port(),
    }
}

/// A sandbox PDS whose data is kept in `dir`, so it can be stopped and started again.
pub async fn sandbox_kept_in(dir: &Path) -> (Storage, SandboxPds) {
    let storage = kept_storage(dir);
    let pds = SandboxPds::start_with(&storage, &[])
        .await
        .expect("the kept sandbox PDS starts");
    (storage, pds)
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

//! New object uids: 16 bytes from the operating system's random source, so an object made
//! again under the same name (or on another device) never shares its predecessor's uid.

use swdesk_kernel::object::Uid;

use crate::StoreError;

/// A fresh uid for an object about to be created.
pub fn random_uid() -> Result<Uid, StoreError> {
    let mut bytes = [0_u8; 16];
    getrandom::getrandom(&mut bytes)
        .map_err(|error| StoreError::NoRandomness(error.to_string()))?;
    Ok(Uid::from_bytes(bytes))
}

//! The progress-write policy: when a changed record may be written (SPEC §2 "Status in the
//! record").
//!
//! | what changed | write |
//! |---|---|
//! | nothing | never |
//! | the declaration, or the deployment ended (alone or with status) | now |
//! | only status, never written before | now |
//! | only status, last write at least [`PROGRESS_INTERVAL`] ago | now |
//! | only status, last write less than [`PROGRESS_INTERVAL`] ago | at last write + interval |
//!
//! Invariants: status-only writes of one record are at least a minute apart; a declaration
//! change or an end is never delayed; the policy reads no clock (`now` is passed in), so the
//! caller requeues itself at the returned time.

use std::time::Duration;

use swdesk_kernel::timestamp::Timestamp;

/// The shortest time between two status-only writes of one record.
pub const PROGRESS_INTERVAL: Duration = Duration::from_secs(60);

/// What differs between the record as written and as it should be.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Changes {
    /// `description` or `contracts` differ.
    pub declaration: bool,
    /// The status differs.
    pub status: bool,
    /// The deployment has ended and the final write is due.
    pub ended: bool,
}

/// When to write the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Write {
    /// Nothing changed: no write.
    Never,
    /// Write now.
    Now,
    /// A status-only change: write at this time (requeue then).
    At(Timestamp),
}

/// The write policy for one record; `last_write` is when it was last written, if ever.
pub fn when_to_write(last_write: Option<Timestamp>, now: Timestamp, changes: Changes) -> Write {
    if changes.declaration || changes.ended {
        return Write::Now;
    }
    if !changes.status {
        return Write::Never;
    }
    match last_write.map(|last| last.saturating_add(PROGRESS_INTERVAL)) {
        Some(due) if due > now => Write::At(due),
        _ => Write::Now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(seconds: i64) -> Timestamp {
        Timestamp::from_unix_millis(seconds * 1000).unwrap()
    }

    const STATUS: Changes = Changes {
        declaration: false,
        status: true,
        ended: false,
    };

    #[test]
    fn a_status_change_within_a_minute_waits_for_the_minute_to_pass() {
        assert_eq!(
            when_to_write(Some(t(100)), t(130), STATUS),
            Write::At(t(160))
        );
    }

    #[test]
    fn a_status_change_a_minute_after_the_last_write_is_written_now() {
        assert_eq!(when_to_write(Some(t(100)), t(160), STATUS), Write::Now);
    }

    #[test]
    fn the_first_status_write_is_immediate() {
        assert_eq!(when_to_write(None, t(0), STATUS), Write::Now);
    }

    #[test]
    fn a_declaration_change_or_an_end_is_written_at_once() {
        let declaration = Changes {
            declaration: true,
            ..STATUS
        };
        let ended = Changes {
            ended: true,
            ..STATUS
        };
        assert_eq!(when_to_write(Some(t(100)), t(101), declaration), Write::Now);
        assert_eq!(when_to_write(Some(t(100)), t(101), ended), Write::Now);
    }

    #[test]
    fn nothing_changed_means_no_write() {
        assert_eq!(
            when_to_write(Some(t(0)), t(1_000), Changes::default()),
            Write::Never
        );
    }

    proptest! {
        #[test]
        fn status_only_writes_are_never_closer_than_the_interval(
            last in 0i64..10_000, later in 0i64..200,
        ) {
            match when_to_write(Some(t(last)), t(last + later), STATUS) {
                Write::Now => prop_assert!(later >= 60),
                Write::At(due) => {
                    prop_assert!(later < 60);
                    prop_assert_eq!(due, t(last + 60));
                }
                Write::Never => prop_assert!(false, "a status change is always written"),
            }
        }
    }
}

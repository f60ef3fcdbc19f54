//! Time as the domain sees it. Every rule that depends on time takes `now: Timestamp` as a
//! parameter; no rule in this crate reads a clock. The [`Clock`] trait is the port the crates
//! that do I/O take their time from: [`SystemClock`], its one implementation on the wall clock
//! (defined here once so the controller and the market share it), or a paused clock in tests.
//!
//! Invariants: a [`Timestamp`] has millisecond precision and always lies in the years
//! 0000..=9999 (the range an atproto datetime can express), so formatting it never fails.
//! Arithmetic saturates at those bounds instead of overflowing or panicking. It serializes as
//! an RFC 3339 UTC string with exactly three fraction digits (`2026-12-02T18:44:00.000Z`).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, macros::format_description};

/// `0000-01-01T00:00:00.000Z` in milliseconds since the Unix epoch.
const MIN_MILLIS: i64 = -62_167_219_200_000;
/// `9999-12-31T23:59:59.999Z` in milliseconds since the Unix epoch.
const MAX_MILLIS: i64 = 253_402_300_799_999;

/// An instant, in milliseconds since the Unix epoch, UTC.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

/// Why a time could not become a [`Timestamp`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TimestampError {
    /// The text is not an RFC 3339 date-time with an offset.
    #[error("{text:?} is not an RFC 3339 date-time such as 2026-12-02T18:44:00.000Z")]
    Syntax {
        /// The text that was given.
        text: String,
    },
    /// The instant lies outside the years 0000..=9999.
    #[error("{millis} ms since the epoch is outside the years 0000 to 9999")]
    OutOfRange {
        /// The instant that was given.
        millis: i64,
    },
}

/// The source of `now` for the crates that do I/O. The domain never calls it itself.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The wall clock: the system's time, saturating at [`Timestamp::MAX`] (and at the epoch for a
/// system clock set before it).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or_default();
        Timestamp::from_unix_millis(millis).unwrap_or(Timestamp::MAX)
    }
}

impl Timestamp {
    /// The earliest instant: `0000-01-01T00:00:00.000Z`.
    pub const MIN: Timestamp = Timestamp(MIN_MILLIS);
    /// The latest instant: `9999-12-31T23:59:59.999Z`.
    pub const MAX: Timestamp = Timestamp(MAX_MILLIS);

    /// The instant `millis` milliseconds after the Unix epoch.
    pub fn from_unix_millis(millis: i64) -> Result<Self, TimestampError> {
        if (MIN_MILLIS..=MAX_MILLIS).contains(&millis) {
            Ok(Self(millis))
        } else {
            Err(TimestampError::OutOfRange { millis })
        }
    }

    /// Milliseconds since the Unix epoch.
    pub const fn unix_millis(self) -> i64 {
        self.0
    }

    /// Parses an RFC 3339 date-time with any offset; sub-millisecond digits are truncated.
    pub fn parse_rfc3339(text: &str) -> Result<Self, TimestampError> {
        let syntax = || TimestampError::Syntax {
            text: text.to_owned(),
        };
        let parsed = OffsetDateTime::parse(text, &Rfc3339).map_err(|_| syntax())?;
        let millis = parsed.unix_timestamp_nanos().div_euclid(1_000_000);
        let millis = i64::try_from(millis).map_err(|_| syntax())?;
        Self::from_unix_millis(millis)
    }

    /// The RFC 3339 UTC form with three fraction digits, e.g. `2026-12-02T18:44:00.000Z`.
    pub fn to_rfc3339(self) -> String {
        let format = format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        );
        let nanos = i128::from(self.0) * 1_000_000;
        OffsetDateTime::from_unix_timestamp_nanos(nanos)
            .ok()
            .and_then(|at| at.format(format).ok())
            .unwrap_or_default()
    }

    /// `self + span`, saturating at [`Timestamp::MAX`].
    pub fn saturating_add(self, span: Duration) -> Self {
        Self(self.0.saturating_add(duration_millis(span)).min(MAX_MILLIS))
    }

    /// `self - span`, saturating at [`Timestamp::MIN`].
    pub fn saturating_sub(self, span: Duration) -> Self {
        Self(self.0.saturating_sub(duration_millis(span)).max(MIN_MILLIS))
    }

    /// How long after `earlier` this instant is; zero when `earlier` is later.
    pub fn since(self, earlier: Timestamp) -> Duration {
        let millis = self.0.saturating_sub(earlier.0).max(0);
        Duration::from_millis(millis.unsigned_abs())
    }
}

/// A duration in whole milliseconds, saturating at `i64::MAX`.
fn duration_millis(span: Duration) -> i64 {
    i64::try_from(span.as_millis()).unwrap_or(i64::MAX)
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp({self})")
    }
}

impl FromStr for Timestamp {
    type Err = TimestampError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse_rfc3339(text)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse_rfc3339(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(text: &str) -> Timestamp {
        Timestamp::parse_rfc3339(text).unwrap()
    }

    #[test]
    fn formats_with_three_fraction_digits_in_utc() {
        assert_eq!(
            at("2026-12-02T19:44:00.5+01:00").to_rfc3339(),
            "2026-12-02T18:44:00.500Z"
        );
    }

    #[test]
    fn truncates_sub_millisecond_digits() {
        assert_eq!(at("2026-12-02T18:44:00.123999Z").unix_millis() % 1000, 123);
    }

    #[test]
    fn refuses_text_that_is_not_rfc3339() {
        let error = Timestamp::parse_rfc3339("yesterday").unwrap_err();
        assert!(matches!(error, TimestampError::Syntax { .. }));
    }

    #[test]
    fn refuses_instants_beyond_year_9999() {
        let error = Timestamp::from_unix_millis(MAX_MILLIS + 1).unwrap_err();
        assert_eq!(
            error,
            TimestampError::OutOfRange {
                millis: MAX_MILLIS + 1
            }
        );
    }

    #[test]
    fn addition_saturates_at_the_last_instant() {
        assert_eq!(
            Timestamp::MAX.saturating_add(Duration::from_secs(1)),
            Timestamp::MAX
        );
        assert_eq!(
            Timestamp::MIN.saturating_sub(Duration::from_secs(1)),
            Timestamp::MIN
        );
    }

    #[test]
    fn since_a_later_instant_is_zero() {
        let early = at("2026-01-01T00:00:00Z");
        assert_eq!(
            early.since(early.saturating_add(Duration::from_secs(5))),
            Duration::ZERO
        );
    }

    #[test]
    fn the_bounds_format_as_years_0000_and_9999() {
        assert_eq!(Timestamp::MIN.to_rfc3339(), "0000-01-01T00:00:00.000Z");
        assert_eq!(Timestamp::MAX.to_rfc3339(), "9999-12-31T23:59:59.999Z");
    }

    proptest! {
        #[test]
        fn every_timestamp_survives_a_json_round_trip(millis in MIN_MILLIS..=MAX_MILLIS) {
            let time = Timestamp::from_unix_millis(millis).unwrap();
            let json = serde_json::to_string(&time).unwrap();
            prop_assert_eq!(serde_json::from_str::<Timestamp>(&json).unwrap(), time);
        }
    }
}

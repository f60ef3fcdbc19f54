//! Syntax of the atproto identifiers and string formats: DID, handle, NSID, at-uri, record key,
//! TID, datetime, CID string, language tag, at-identifier and generic URI; and [`AtUri`].
//!
//! Each check follows the atproto specification as its interop vectors pin it down
//! (`tests/fixtures/interop/syntax`): e.g. an at-uri here is the strict lexicon form
//! `at://<did|handle>[/<nsid>[/<record-key>]]` with no query, fragment or trailing slash, and a
//! datetime must also be a real instant (no month 13, nothing before year 0). Checks are pure,
//! allocation-free where they can be, and never panic on any input.

use std::fmt;
use std::str::FromStr;

use crate::schema::StringFormat;

/// Which syntax a string failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SyntaxKind {
    /// A DID.
    Did,
    /// A handle.
    Handle,
    /// An NSID.
    Nsid,
    /// An at-uri.
    AtUri,
    /// A record key.
    RecordKey,
    /// A TID.
    Tid,
    /// A datetime.
    Datetime,
    /// A CID string.
    Cid,
    /// A language tag.
    Language,
    /// A handle or DID.
    AtIdentifier,
    /// A generic URI.
    Uri,
}

impl fmt::Display for SyntaxKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Self::Did => "DID",
            Self::Handle => "handle",
            Self::Nsid => "NSID",
            Self::AtUri => "at-uri",
            Self::RecordKey => "record key",
            Self::Tid => "TID",
            Self::Datetime => "datetime",
            Self::Cid => "CID",
            Self::Language => "language tag",
            Self::AtIdentifier => "handle or DID",
            Self::Uri => "URI",
        })
    }
}

/// A string that does not follow a syntax, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a valid {kind}: {reason}")]
pub struct SyntaxError {
    /// The syntax.
    pub kind: SyntaxKind,
    /// What is wrong.
    pub reason: &'static str,
}

type Checked = Result<(), SyntaxError>;

fn fail(kind: SyntaxKind, reason: &'static str) -> Checked {
    Err(SyntaxError { kind, reason })
}

/// True when every byte is an ASCII letter, a digit, or one of `extra`.
fn alnum_or(value: &str, extra: &[u8]) -> bool {
    value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || extra.contains(&b))
}

fn require(condition: bool, kind: SyntaxKind, reason: &'static str) -> Checked {
    if condition {
        Ok(())
    } else {
        fail(kind, reason)
    }
}

/// Checks `value` against a lexicon string format.
pub fn check_format(format: StringFormat, value: &str) -> Checked {
    match format {
        StringFormat::AtIdentifier => at_identifier(value),
        StringFormat::AtUri => at_uri(value),
        StringFormat::Cid => cid(value),
        StringFormat::Datetime => datetime(value),
        StringFormat::Did => did(value),
        StringFormat::Handle => handle(value),
        StringFormat::Nsid => nsid(value),
        StringFormat::Tid => tid(value),
        StringFormat::RecordKey => record_key(value),
        StringFormat::Uri => uri(value),
        StringFormat::Language => language(value),
    }
}

/// `did:<method>:<id>`: method lower-case letters; id of `[a-zA-Z0-9._:%-]`, not ending in `:`
/// or `%`; at most 2048 characters.
pub fn did(value: &str) -> Checked {
    const KIND: SyntaxKind = SyntaxKind::Did;
    require(value.len() <= 2048, KIND, "longer than 2048 characters")?;
    let Some(rest) = value.strip_prefix("did:") else {
        return fail(KIND, "does not start with `did:`");
    };
    let Some((method, id)) = rest.split_once(':') else {
        return fail(KIND, "has no method-specific id");
    };
    let method_ok = !method.is_empty() && method.bytes().all(|b| b.is_ascii_lowercase());
    require(method_ok, KIND, "the method must be lower-case letters")?;
    let id_ok = alnum_or(id, b"._:%-");
    require(
        id_ok,
        KIND,
        "the id holds a character outside [a-zA-Z0-9._:%-]",
    )?;
    let ends_ok = id.bytes().last().is_some_and(|b| b != b':' && b != b'%');
    require(ends_ok, KIND, "the id is empty or ends in `:` or `%`")
}

/// A DNS name of at least two labels, each 1-63 of `[a-zA-Z0-9-]` not starting or ending in
/// `-`, the last starting with a letter; at most 253 characters.
pub fn handle(value: &str) -> Checked {
    const KIND: SyntaxKind = SyntaxKind::Handle;
    require(value.len() <= 253, KIND, "longer than 253 characters")?;
    let labels: Vec<&str> = value.split('.').collect();
    require(labels.len() >= 2, KIND, "needs at least two labels")?;
    for label in &labels {
        require(
            is_dns_label(label),
            KIND,
            "a label is not 1-63 of [a-zA-Z0-9-] without `-` at its ends",
        )?;
    }
    let tld_ok = labels
        .last()
        .and_then(|tld| tld.bytes().next())
        .is_some_and(|b| b.is_ascii_alphabetic());
    require(tld_ok, KIND, "the last label must start with a letter")
}

fn is_dns_label(label: &str) -> bool {
    let bytes = label.as_bytes();
    (1..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        && bytes.first() != Some(&b'-')
        && bytes.last() != Some(&b'-')
}

/// A reversed domain name (at least two labels, the first starting with a letter) and a name of
/// letters and digits starting with a letter; at most 317 characters in all.
pub fn nsid(value: &str) -> Checked {
    const KIND: SyntaxKind = SyntaxKind::Nsid;
    require(value.len() <= 317, KIND, "longer than 317 characters")?;
    let Some((authority, name)) = value.rsplit_once('.') else {
        return fail(KIND, "needs at least three segments");
    };
    let segments: Vec<&str> = authority.split('.').collect();
    require(segments.len() >= 2, KIND, "needs at least three segments")?;
    for segment in &segments {
        require(
            is_dns_label(segment),
            KIND,
            "a domain segment is not 1-63 of [a-zA-Z0-9-] without `-` at its ends",
        )?;
    }
    let first_ok = authority
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic());
    require(first_ok, KIND, "the first segment must start with a letter")?;
    let name_ok = (1..=63).contains(&name.len())
        && name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && name.bytes().all(|b| b.is_ascii_alphanumeric());
    require(
        name_ok,
        KIND,
        "the name must be 1-63 letters and digits, starting with a letter",
    )
}

/// 1-512 of `[a-zA-Z0-9_~.:-]`, not `.` or `..`.
pub fn record_key(value: &str) -> Checked {
    const KIND: SyntaxKind = SyntaxKind::RecordKey;
    require(
        (1..=512).contains(&value.len()),
        KIND,
        "must be 1-512 characters",
    )?;
    require(
        value != "." && value != "..",
        KIND,
        "`.` and `..` are not record keys",
    )?;
    let chars_ok = alnum_or(value, b"_~.:-");
    require(chars_ok, KIND, "holds a character outside [a-zA-Z0-9_~.:-]")
}

/// 13 characters of base32-sortable (`234567a-z`), the first one of `234567a-j`.
pub fn tid(value: &str) -> Checked {
    const KIND: SyntaxKind = SyntaxKind::Tid;
    let bytes = value.as_bytes();
    require(bytes.len() == 13, KIND, "must be 13 characters")?;
    let sortable = |b: &u8| matches!(b, b'2'..=b'7' | b'a'..=b'z');
    require(
        bytes.iter().all(sortable),
        KIND,
        "holds a character outside [234567a-z]",
    )?;
    require(
        matches!(bytes[0], b'2'..=b'7' | b'a'..=b'j'),
        KIND,
        "the top bit must be zero",
    )
}

/// A CID in string form: 8-256 of `[a-zA-Z0-9+=]`, not a CIDv0 (`Qmb...`).
pub fn cid(value: &str) -> Checked {
    const KIND: SyntaxKind = SyntaxKind::Cid;
    require(
        (8..=256).contains(&value.len()),
        KIND,
        "must be 8-256 characters",
    )?;
    let chars_ok = alnum_or(value, b"+=");
    require(chars_ok, KIND, "holds a character outside [a-zA-Z0-9+=]")?;
    require(!value.starts_with("Qmb"), KIND, "CIDv0 is not supported")
}

/// A handle or a DID.
pub fn at_identifier(value: &str) -> Checked {
    let result = if value.starts_with("did:") {
        did(value)
    } else {
        handle(value)
    };
    result.map_err(|error| SyntaxError {
        kind: SyntaxKind::AtIdentifier,
        reason: error.reason,
    })
}

/// `scheme:rest`: the scheme a letter then `[a-zA-Z0-9+.-]`, the rest non-empty, without
/// whitespace and not starting with `/` (after an optional `//`); at most 8192 characters.
pub fn uri(value: &str) -> Checked {
    const KIND: SyntaxKind = SyntaxKind::Uri;
    require(value.len() <= 8192, KIND, "longer than 8192 characters")?;
    let Some((scheme, rest)) = value.split_once(':') else {
        return fail(KIND, "has no scheme");
    };
    let scheme_ok = scheme
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && alnum_or(scheme, b"+.-");
    require(
        scheme_ok,
        KIND,
        "the scheme must be a letter then [a-zA-Z0-9+.-]",
    )?;
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    require(
        !rest.is_empty() && !rest.starts_with('/'),
        KIND,
        "nothing follows the scheme",
    )?;
    require(
        !value.chars().any(char::is_whitespace),
        KIND,
        "holds whitespace",
    )
}

/// `at://<did|handle>[/<nsid>[/<record-key>]]`, at most 8192 characters.
pub fn at_uri(value: &str) -> Checked {
    AtUri::parse_parts(value).map(drop)
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)`, a real instant not before year 0;
/// `-00:00` is refused; at most 64 characters.
pub fn datetime(value: &str) -> Checked {
    const KIND: SyntaxKind = SyntaxKind::Datetime;
    require(value.len() <= 64, KIND, "longer than 64 characters")?;
    let parts = datetime_parts(value.as_bytes()).ok_or(SyntaxError {
        kind: KIND,
        reason: "not of the form YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)",
    })?;
    require(
        !value.ends_with("-00:00"),
        KIND,
        "`-00:00` is not an offset",
    )?;
    require(
        (1..=12).contains(&parts.month),
        KIND,
        "the month is not 01-12",
    )?;
    let days = days_in_month(parts.year, parts.month);
    require(
        (1..=days).contains(&parts.day),
        KIND,
        "the day does not exist in that month",
    )?;
    require(
        parts.hour < 24 && parts.minute < 60 && parts.second < 60,
        KIND,
        "the time of day does not exist",
    )?;
    let minutes_into_year_zero = i64::from(day_of_year(parts.year, parts.month, parts.day)) * 1440
        + i64::from(parts.hour) * 60
        + i64::from(parts.minute)
        - parts.offset_minutes;
    require(
        parts.year > 0 || minutes_into_year_zero >= 0,
        KIND,
        "the instant is before year 0",
    )
}

struct DatetimeParts {
    year: u32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    offset_minutes: i64,
}

fn datetime_parts(bytes: &[u8]) -> Option<DatetimeParts> {
    let (date_time, zone) = split_zone(bytes)?;
    let (main, fraction) = match date_time.iter().position(|&b| b == b'.') {
        Some(dot) => (&date_time[..dot], Some(&date_time[dot + 1..])),
        None => (date_time, None),
    };
    if let Some(fraction) = fraction {
        let digits_ok =
            (1..=20).contains(&fraction.len()) && fraction.iter().all(u8::is_ascii_digit);
        digits_ok.then_some(())?;
    }
    let shape_ok = main.len() == 19
        && main[4] == b'-'
        && main[7] == b'-'
        && main[10] == b'T'
        && main[13] == b':'
        && main[16] == b':';
    shape_ok.then_some(())?;
    Some(DatetimeParts {
        year: digits(&main[0..4])?,
        month: digits(&main[5..7])?,
        day: digits(&main[8..10])?,
        hour: digits(&main[11..13])?,
        minute: digits(&main[14..16])?,
        second: digits(&main[17..19])?,
        offset_minutes: zone,
    })
}

/// Splits off `Z` or `±HH:MM`, giving the offset in minutes.
fn split_zone(bytes: &[u8]) -> Option<(&[u8], i64)> {
    if let Some(rest) = bytes.strip_suffix(b"Z") {
        return Some((rest, 0));
    }
    let split = bytes.len().checked_sub(6)?;
    let (rest, zone) = bytes.split_at(split);
    let sign = match zone[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    (zone[3] == b':').then_some(())?;
    let hours = digits(&zone[1..3])?;
    let minutes = digits(&zone[4..6])?;
    (hours < 24 && minutes < 60).then_some(())?;
    Some((rest, sign * i64::from(hours * 60 + minutes)))
}

fn digits(bytes: &[u8]) -> Option<u32> {
    bytes.iter().try_fold(0u32, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + u32::from(b - b'0'))
    })
}

fn is_leap_year(year: u32) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn day_of_year(year: u32, month: u32, day: u32) -> u32 {
    (1..month).map(|m| days_in_month(year, m)).sum::<u32>() + day - 1
}

/// A BCP 47 language tag: a primary subtag (`i`, `x`/`X`, or 2-3 lower-case letters), then
/// subtags of 1-8 letters and digits; no variant or extension singleton repeated (ignoring case).
pub fn language(value: &str) -> Checked {
    const KIND: SyntaxKind = SyntaxKind::Language;
    let mut subtags = value.split('-');
    let primary = subtags.next().unwrap_or_default();
    let primary_ok = matches!(primary, "i" | "x" | "X")
        || ((2..=3).contains(&primary.len()) && primary.bytes().all(|b| b.is_ascii_lowercase()));
    require(
        primary_ok,
        KIND,
        "the primary subtag must be 2-3 lower-case letters, `i` or `x`",
    )?;
    let rest: Vec<&str> = subtags.collect();
    let subtags_ok = rest
        .iter()
        .all(|s| (1..=8).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric()));
    require(subtags_ok, KIND, "a subtag is not 1-8 letters and digits")?;
    if primary.eq_ignore_ascii_case("x") {
        return Ok(());
    }
    check_language_repeats(&rest)
}

/// Refuses repeated variants (before the first singleton) and repeated extension singletons
/// (before the private-use `x`), ignoring case.
fn check_language_repeats(subtags: &[&str]) -> Checked {
    const KIND: SyntaxKind = SyntaxKind::Language;
    let mut variants: Vec<String> = Vec::new();
    let mut singletons: Vec<String> = Vec::new();
    let mut in_extension = false;
    for (index, subtag) in subtags.iter().enumerate() {
        let lower = subtag.to_ascii_lowercase();
        if lower.len() == 1 {
            if lower == "x" {
                return Ok(());
            }
            require(
                subtags.get(index + 1).is_some(),
                KIND,
                "a singleton needs a subtag after it",
            )?;
            require(
                !singletons.contains(&lower),
                KIND,
                "an extension singleton is repeated",
            )?;
            singletons.push(lower);
            in_extension = true;
        } else if !in_extension && is_variant(subtag) {
            require(
                !variants.contains(&lower),
                KIND,
                "a variant subtag is repeated",
            )?;
            variants.push(lower);
        }
    }
    Ok(())
}

fn is_variant(subtag: &str) -> bool {
    (5..=8).contains(&subtag.len())
        || (subtag.len() == 4 && subtag.bytes().next().is_some_and(|b| b.is_ascii_digit()))
}

/// A strict at-uri: `at://<authority>[/<collection>[/<rkey>]]`.
///
/// Invariant: every `AtUri` value passed [`at_uri`]; `Display` gives back the parsed text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AtUri {
    authority: String,
    collection: Option<String>,
    rkey: Option<String>,
}

impl AtUri {
    /// An at-uri of a record: checks every part.
    pub fn record(authority: &str, collection: &str, rkey: &str) -> Result<Self, SyntaxError> {
        format!("at://{authority}/{collection}/{rkey}").parse()
    }

    /// The DID or handle.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// The collection NSID, if the URI names one.
    pub fn collection(&self) -> Option<&str> {
        self.collection.as_deref()
    }

    /// The record key, if the URI names one.
    pub fn rkey(&self) -> Option<&str> {
        self.rkey.as_deref()
    }

    fn parse_parts(value: &str) -> Result<(&str, Option<&str>, Option<&str>), SyntaxError> {
        const KIND: SyntaxKind = SyntaxKind::AtUri;
        let wrap = |error: SyntaxError| SyntaxError {
            kind: KIND,
            reason: error.reason,
        };
        require(value.len() <= 8192, KIND, "longer than 8192 characters")?;
        let Some(rest) = value.strip_prefix("at://") else {
            return Err(SyntaxError {
                kind: KIND,
                reason: "does not start with `at://`",
            });
        };
        require(
            !rest.contains(['#', '?']),
            KIND,
            "a query or fragment is not allowed",
        )?;
        let mut parts = rest.split('/');
        let authority = parts.next().unwrap_or_default();
        at_identifier(authority).map_err(wrap)?;
        let collection = parts.next();
        if let Some(collection) = collection {
            nsid(collection).map_err(wrap)?;
        }
        let rkey = parts.next();
        if let Some(rkey) = rkey {
            record_key(rkey).map_err(wrap)?;
        }
        require(
            parts.next().is_none(),
            KIND,
            "has more than authority, collection and record key",
        )?;
        Ok((authority, collection, rkey))
    }
}

impl FromStr for AtUri {
    type Err = SyntaxError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let (authority, collection, rkey) = Self::parse_parts(value)?;
        Ok(Self {
            authority: authority.to_owned(),
            collection: collection.map(str::to_owned),
            rkey: rkey.map(str::to_owned),
        })
    }
}

impl fmt::Display for AtUri {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "at://{}", self.authority)?;
        if let Some(collection) = &self.collection {
            write!(formatter, "/{collection}")?;
        }
        if let Some(rkey) = &self.rkey {
            write!(formatter, "/{rkey}")?;
        }
        Ok(())
    }
}

impl serde::Serialize for AtUri {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for AtUri {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_at_uri_parses_into_its_parts_and_prints_back() {
        let uri: Result<AtUri, _> = "at://did:plc:abc/computer.socialweb.infra/web".parse();
        let uri = uri.expect("parses");
        assert_eq!(uri.authority(), "did:plc:abc");
        assert_eq!(uri.collection(), Some("computer.socialweb.infra"));
        assert_eq!(uri.rkey(), Some("web"));
        assert_eq!(
            uri.to_string(),
            "at://did:plc:abc/computer.socialweb.infra/web"
        );
        assert_eq!(
            AtUri::record("did:plc:abc", "computer.socialweb.infra", "web"),
            Ok(uri)
        );
    }

    #[test]
    fn an_at_uri_with_a_bad_part_names_that_part() {
        let error = AtUri::record("did:plc:abc", "computer.socialweb.infra", "a/b");
        assert_eq!(
            error.map_err(|e| e.reason),
            Err("has more than authority, collection and record key")
        );
        assert_eq!(
            at_uri("at://did:plc:abc/notannsid").map_err(|e| e.kind),
            Err(SyntaxKind::AtUri)
        );
    }

    #[test]
    fn datetimes_must_name_a_real_instant() {
        assert_eq!(datetime("2024-02-29T00:00:00Z"), Ok(()));
        assert!(datetime("2023-02-29T00:00:00Z").is_err());
        assert!(datetime("0000-01-01T00:00:00+01:00").is_err());
        assert_eq!(datetime("0000-01-01T00:00:00-01:00"), Ok(()));
    }
}

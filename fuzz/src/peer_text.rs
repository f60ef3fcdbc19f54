//! `peer_text`: a peer's text (an error message, a refusal reason) made fit to keep by
//! `swdesk_lexicon::text::{fit, peer_text}`. The first two bytes are the limit in bytes
//! (little-endian, up to 65535), the rest the text (lossy UTF-8).
//!
//! Invariants (the module's):
//! - `fit` gives the text unchanged (borrowed) when it fits; otherwise at most `max_bytes` bytes:
//!   a prefix of the text ending on a grapheme boundary, then the cut mark when there is room;
//! - `peer_text` gives at most `max_bytes` bytes, on one line: no control character, no line
//!   or paragraph separator (U+2028/U+2029), no bidi override or mark; a clean, trimmed text
//!   that fits is kept as it is.

use std::borrow::Cow;

use swdesk_lexicon::text::{CUT_MARK, fit, peer_text};
use unicode_segmentation::UnicodeSegmentation as _;

pub fn check(data: &[u8]) {
    let (limit, rest) = data.split_at(data.len().min(2));
    let max = match *limit {
        [low, high] => usize::from(u16::from_le_bytes([low, high])),
        _ => 0,
    };
    let text = crate::text(rest);
    check_fit(&text, max);
    check_peer_text(&text, max);
}

fn check_fit(text: &str, max: usize) {
    let cut = fit(text, max);
    if text.len() <= max {
        assert!(
            matches!(cut, Cow::Borrowed(kept) if kept == text),
            "a fitting text changed"
        );
        return;
    }
    assert!(cut.len() <= max, "fit gave {} bytes for {max}", cut.len());
    let kept = match cut.strip_suffix(CUT_MARK) {
        Some(kept) => kept,
        None => {
            assert!(max < CUT_MARK.len(), "a cut without its mark: {cut:?}");
            &cut
        }
    };
    assert!(
        text.starts_with(kept),
        "the kept part is not the text's start"
    );
    let end = kept.len();
    assert!(
        end == 0 || text.grapheme_indices(true).any(|(at, _)| at == end),
        "cut inside a grapheme at {end}"
    );
}

pub fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
}

/// What breaks or disguises a line: a control, a line or paragraph separator, a bidi mark.
pub fn is_unclean(c: char) -> bool {
    c.is_control() || c == '\u{2028}' || c == '\u{2029}' || is_bidi(c)
}

fn check_peer_text(text: &str, max: usize) {
    let kept = peer_text(text, max);
    assert!(
        kept.len() <= max,
        "peer_text gave {} bytes for {max}",
        kept.len()
    );
    assert!(
        !kept.chars().any(is_unclean),
        "a control, separator or bidi character kept: {kept:?}"
    );
    let clean = !text.chars().any(is_unclean);
    if clean && text.trim() == text && text.len() <= max {
        assert_eq!(kept, text, "a clean text that fits was changed");
    }
}

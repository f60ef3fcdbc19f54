//! Text from another party, made fit to keep: a peer's error message, a refusal reason, a
//! handle shown in a message. [`peer_text`] puts it on one line (controls and the bidi
//! overrides that could make it read as something else become spaces or are dropped) and
//! [`fit`] cuts it to a byte limit on a grapheme boundary, marking the cut, so a peer can
//! never make a record exceed its lexicon's `maxLength` or a message grow without bound.
//!
//! Invariant: the result of [`fit`] is at most `max_bytes` long, the cut mark included, and is
//! the text unchanged when it already fits.

use std::borrow::Cow;

use unicode_segmentation::UnicodeSegmentation;

/// What a cut text ends with.
pub const CUT_MARK: &str = " …[cut]";

/// `text` cut to at most `max_bytes` bytes on a grapheme boundary, ending with [`CUT_MARK`]
/// when anything was cut.
pub fn fit(text: &str, max_bytes: usize) -> Cow<'_, str> {
    if text.len() <= max_bytes {
        return Cow::Borrowed(text);
    }
    let room = max_bytes.saturating_sub(CUT_MARK.len());
    let mut end = 0;
    for (start, grapheme) in text.grapheme_indices(true) {
        if start + grapheme.len() > room {
            break;
        }
        end = start + grapheme.len();
    }
    let mark = if max_bytes >= CUT_MARK.len() {
        CUT_MARK
    } else {
        ""
    };
    Cow::Owned(format!("{}{mark}", &text[..end]))
}

/// A peer's `text` on one line, without controls or bidi overrides, cut to `max_bytes`.
pub fn peer_text(text: &str, max_bytes: usize) -> String {
    // Reading more than a few times the limit is pointless: cut the input first (on a char
    // boundary), then clean, then fit.
    let mut end = text.len().min(max_bytes.saturating_mul(4).max(64));
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut clean: String = text[..end].chars().filter_map(one_line).collect();
    if end < text.len() {
        clean.push_str(CUT_MARK);
    }
    fit(clean.trim(), max_bytes).into_owned()
}

fn one_line(c: char) -> Option<char> {
    match c {
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' => None,
        // Line and paragraph separators break a line as a newline does.
        c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => Some(' '),
        c => Some(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_that_fits_is_unchanged() {
        assert!(matches!(fit("fine", 4), Cow::Borrowed("fine")));
    }

    #[test]
    fn a_long_text_is_cut_on_a_grapheme_and_marked() {
        let family = "👨‍👩‍👧"; // one grapheme of 18 bytes
        let text = format!("ab{family}{family}");
        let cut = fit(&text, 2 + 18 + CUT_MARK.len() + 5);
        assert_eq!(cut, format!("ab{family}{CUT_MARK}"));
    }

    #[test]
    fn a_peer_text_is_one_line_without_bidi_overrides_and_within_its_limit() {
        let hostile = format!(
            "line\u{2028}next\u{202E}gnp.exe\t{}",
            "x".repeat(100 * 1024)
        );
        let kept = peer_text(&hostile, 2048);
        assert!(kept.len() <= 2048);
        assert!(kept.starts_with("line nextgnp.exe x"), "{kept:.40}");
        assert!(kept.ends_with(CUT_MARK));
        assert!(!kept.contains('\u{202E}'));
    }

    proptest::proptest! {
        #[test]
        fn fit_never_exceeds_its_limit(text in ".{0,300}", max in 0usize..200) {
            let cut = fit(&text, max);
            proptest::prop_assert!(cut.len() <= max || cut == text);
            proptest::prop_assert!(cut.len() <= max.max(text.len()));
            if text.len() > max {
                proptest::prop_assert!(cut.len() <= max);
            }
        }
    }
}

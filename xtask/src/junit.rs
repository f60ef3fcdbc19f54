//! Why each test failed, read from a nextest JUnit report: the test's name and the description
//! nextest keeps in its `<failure>` element (the panic message or the returned `Error:`). The
//! test task prints these last, after every suite's own output, so a CI log cut in its middle
//! still ends with the reason of each failure rather than the tail of an app's log.

/// One failed test and the first lines of why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub test: String,
    pub why: String,
}

/// Lines of a failure's description kept, and characters of each.
const WHY_LINES: usize = 12;
const WHY_LINE_CHARS: usize = 400;

/// Every failed test case of the report, in the report's order.
pub fn failures(report: &str) -> Vec<Failure> {
    report
        .split("<testcase ")
        .skip(1)
        .filter_map(|case| {
            let case = &case[..case.find("</testcase>").unwrap_or(case.len())];
            let at = case.find("<failure").or_else(|| case.find("<error"))?;
            Some(Failure {
                test: attribute(case, "name").unwrap_or_else(|| "(unnamed)".to_owned()),
                why: description(&case[at..]),
            })
        })
        .collect()
}

/// The text of the failure element that `element` starts with, or its `type` when it is empty.
fn description(element: &str) -> String {
    let open_end = element.find('>').unwrap_or(element.len());
    let kind = attribute(&element[..open_end], "type").unwrap_or_default();
    let body = if element[..open_end].ends_with('/') {
        ""
    } else {
        let rest = &element[(open_end + 1).min(element.len())..];
        &rest[..rest.find("</").unwrap_or(rest.len())]
    };
    let text = unescape(body);
    let lines: Vec<String> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .take(WHY_LINES)
        .map(|line| line.chars().take(WHY_LINE_CHARS).collect())
        .collect();
    if lines.is_empty() {
        kind
    } else {
        lines.join("\n")
    }
}

/// The unescaped value of the attribute `name` in `tag`.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let needle = format!("{name}=\"");
    let at = if tag.starts_with(&needle) {
        0
    } else {
        tag.find(&format!(" {needle}"))? + 1
    };
    let value = &tag[at + needle.len()..];
    Some(unescape(&value[..value.find('"')?]))
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#xA;", "\n")
        .replace("&#10;", "\n")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::{Failure, failures};

    #[test]
    fn each_failed_case_is_named_with_its_description_and_passes_are_skipped() {
        let report = r#"<testsuites tests="3" failures="2"><testsuite>
<testcase name="a::passes" classname="x" time="1"/>
<testcase name="b::fails" classname="x"><failure type="test failure with exit code 1">Error: `[data-x]` never read &quot;Deployed&quot;; it read &quot;Requested&quot;

Caused by:
    a &lt;b&gt; &amp; c</failure><system-err>a long app log</system-err></testcase>
<testcase name="c::empty" classname="x"><failure type="test failure with exit code 101"/></testcase>
</testsuite></testsuites>"#;
        assert_eq!(
            failures(report),
            vec![
                Failure {
                    test: "b::fails".to_owned(),
                    why: "Error: `[data-x]` never read \"Deployed\"; it read \"Requested\"\nCaused by:\n    a <b> & c".to_owned(),
                },
                Failure {
                    test: "c::empty".to_owned(),
                    why: "test failure with exit code 101".to_owned(),
                },
            ]
        );
    }

    #[test]
    fn a_report_with_no_failures_has_none() {
        assert!(failures(r#"<testsuites><testcase name="a" time="1"/></testsuites>"#).is_empty());
    }
}

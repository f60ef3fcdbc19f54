//! The sandbox PDS's outgoing mail, as the harness keeps it: its own SMTP server on loopback
//! writes each mail the PDS sends as one JSON file in a folder (the ready line's `mailbox`).
//! [`read`] gives the mails in the order they arrived; [`Mail::code`] finds the code of a PLC
//! operation or an email confirmation in one, as the owner would read it off the mail.

use std::path::Path;

use serde::Deserialize;

/// One mail the PDS sent.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Mail {
    /// When the mailbox received it (RFC 3339).
    pub received_at: String,
    /// The envelope's sender.
    pub from: Option<String>,
    /// The envelope's recipients.
    pub to: Vec<String>,
    /// The subject.
    pub subject: String,
    /// The plain-text body.
    pub text: String,
}

impl Mail {
    /// Whether `address` is among the recipients (case-insensitive).
    pub fn is_to(&self, address: &str) -> bool {
        self.to.iter().any(|to| to.eq_ignore_ascii_case(address))
    }

    /// The first code in the body shaped as the PDS makes them: `XXXXX-XXXXX`, base32 capitals.
    pub fn code(&self) -> Option<&str> {
        let bytes = self.text.as_bytes();
        (0..bytes.len().saturating_sub(10))
            .find(|&start| is_code(&bytes[start..start + 11]) && is_alone(bytes, start))
            .map(|start| &self.text[start..start + 11])
    }
}

/// Every mail in `folder`, oldest first (the harness names files by arrival); a folder that
/// does not exist holds none.
pub fn read(folder: &Path) -> std::io::Result<Vec<Mail>> {
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut names: Vec<_> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path)?;
            serde_json::from_str(&text).map_err(std::io::Error::other)
        })
        .collect()
}

/// `XXXXX-XXXXX` in base32 capitals.
fn is_code(window: &[u8]) -> bool {
    let symbol = |byte: &u8| byte.is_ascii_uppercase() || (b'2'..=b'7').contains(byte);
    window.len() == 11
        && window[5] == b'-'
        && window[..5].iter().all(symbol)
        && window[6..].iter().all(symbol)
}

/// Whether the 11 bytes at `start` stand alone (no letter or digit right before or after).
fn is_alone(bytes: &[u8], start: usize) -> bool {
    let word = |index: Option<usize>| {
        index
            .and_then(|index| bytes.get(index))
            .is_some_and(u8::is_ascii_alphanumeric)
    };
    !word(start.checked_sub(1)) && !word(Some(start + 11))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mail(text: &str) -> Mail {
        Mail {
            received_at: "2026-12-06T15:46:47.854Z".into(),
            from: Some("pds@localhost.test".into()),
            to: vec!["Alice.test@example.test".into()],
            subject: "PLC Update Operation Requested".into(),
            text: text.into(),
        }
    }

    #[test]
    fn the_code_is_read_off_the_pds_s_mail() {
        let text = "PLC UPDATE REQUESTED\n\nWe received a request to update your PLC identity. \
                    Your confirmation code is:\n\nXNCMA-KGFJE\n\nUpdating your PLC identity";
        assert_eq!(mail(text).code(), Some("XNCMA-KGFJE"));
        assert_eq!(mail("no code, only PLC-UPDATE words").code(), None);
        assert_eq!(mail("inside AXNCMA-KGFJE of a word").code(), None);
        assert_eq!(mail("XNCMA-KGFJE").code(), Some("XNCMA-KGFJE"));
        assert!(mail("").is_to("alice.test@example.test"));
    }

    #[test]
    fn mails_are_read_oldest_first_and_a_missing_folder_holds_none() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(&dir.path().join("none")).unwrap(), Vec::new());
        let write = |name: &str, code: &str| {
            let mail = serde_json::json!({"receivedAt": "t", "from": null, "to": ["a@b.test"],
                "subject": "s", "text": code});
            std::fs::write(dir.path().join(name), mail.to_string()).unwrap();
        };
        write("1796572007854-000002.json", "BBBBB-BBBBB");
        write("1796572007854-000001.json", "AAAAA-AAAAA");
        std::fs::write(dir.path().join(".1796572007855-000003.tmp"), "half").unwrap();
        let codes: Vec<_> = read(dir.path())
            .unwrap()
            .iter()
            .map(|mail| mail.code().map(str::to_owned))
            .collect();
        assert_eq!(
            codes,
            [Some("AAAAA-AAAAA".into()), Some("BBBBB-BBBBB".into())]
        );
    }
}

//! Inputs the fuzz target `kubeconfig` (`fuzz/`, see its README) found breaking this crate's
//! promise that a kubeconfig's text is never put in an error message: the YAML parser's error
//! quotes the lines around the error, client key included.

use swdesk_gateway::kubeconfig::Summary;

/// Stand-ins for the base64 lines of a client key.
const KEY_LINES: [&str; 2] = [
    "c2VjcmV0LWtleS1tYXRlcmlhbC1vbmUtdHdvLXRocmVlLWZvdXI",
    "Zml2ZS1zaXgtc2V2ZW4tZWlnaHQtbmluZS10ZW4tZWxldmVu",
];

fn assert_no_key(text: &str) {
    let error = Summary::parse(text).expect_err("not a kubeconfig");
    let message = error.to_string();
    for line in KEY_LINES {
        assert!(
            !message.contains(&line[..16]),
            "the error repeats the client key: {message}"
        );
    }
}

#[test]
fn a_yaml_error_after_a_block_scalar_key_does_not_repeat_the_key() {
    let text = format!(
        "apiVersion: v1\nkind: Config\nusers:\n- name: alpha-admin\n  user:\n    \
         client-key-data: |\n      {}\n      {}\n    bad: x: y\n",
        KEY_LINES[0], KEY_LINES[1]
    );
    assert_no_key(&text);
}

/// The fuzzer's shape: a control character in the line after the key.
#[test]
fn a_yaml_error_beside_a_plain_key_does_not_repeat_the_key() {
    let text = format!(
        "apiVersion: v1\nkind: Config\nusers:\n- name: alpha-admin\n  user:\n    \
         client-key-data: {}{}\ncontext\u{5}: alpha\n",
        KEY_LINES[0], KEY_LINES[1]
    );
    assert_no_key(&text);
}

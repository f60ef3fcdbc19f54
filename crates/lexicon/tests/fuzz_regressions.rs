//! Inputs the fuzz targets (`fuzz/`, see its README) found breaking this crate's promises, kept
//! as tests: a value the lexicons accept reads into its generated type, `$bytes` are read alike
//! by `Bytes` and the data model, and `data_model::check` accepts exactly what `to_ipld` converts.
//! Each test names the target that found its input.

use serde_json::{Value, json};
use swdesk_lexicon::com::publicdomainrelay::temp::compute::vm::Vm;
use swdesk_lexicon::com::publicdomainrelay::temp::market::bid::Bid;
use swdesk_lexicon::computer::socialweb::k8s::get_job;
use swdesk_lexicon::data_model::{self, Special};
use swdesk_lexicon::validate::{self, XrpcBody};
use swdesk_lexicon::{Bytes, Record};

/// A market bid as the fixtures hold it, with `signature` as its signature's `$bytes`.
fn bid(signature: &str) -> Value {
    json!({
        "$type": "com.publicdomainrelay.temp.market.bid",
        "rfp": {
            "uri": "at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/com.publicdomainrelay.temp.market.rfp/3lbjpbyznfc2b",
            "cid": "bafyreid3imdulnhgeytpf6uk7zahjvrsqlofkmm5b5ub2maw4kqus6jp4i"
        },
        "payload": {
            "uri": "at://did:web:bidder.example.com/com.publicdomainrelay.temp.market.bids.free/3lbjpbyznfc2c",
            "cid": "bafyreidfayvfuwqa7qlnopdjiqrxzs6blmoeu4rujcjtnci5beludirz2a",
            "cost": 0
        },
        "submitAccept": "did:web:bidder.example.com#temp_market",
        "signatures": [{
            "$type": "network.attested.signature",
            "key": "did:key:zDnaembgSGUhZULN2Caob4HLJPaxBh92N7rtH21TErzqf8HQo",
            "cid": "bafyreihldkhcwijkde7gx4rpkkuw7pl6lbyu5gieunyc7ihactn5bkd2nm",
            "signature": {"$bytes": signature},
            "issuedAt": "2026-12-03T10:00:00.000Z"
        }]
    })
}

/// Found by `records` and `xrpc_answer`: `aGl` is `hi` with non-zero trailing bits, which the
/// data model (and so validation) accepts and `Bytes` refused.
#[test]
fn bytes_with_trailing_bits_are_read_alike_by_bytes_and_the_data_model() {
    let value = json!({"$bytes": "aGl"});
    let model = match value.as_object().map(data_model::classify) {
        Some(Ok(Special::Bytes(bytes))) => Some(bytes),
        _ => None,
    };
    let typed = serde_json::from_value::<Bytes>(value)
        .ok()
        .map(|bytes| bytes.0);
    assert_eq!(typed, model);
}

#[test]
fn a_bid_the_lexicon_accepts_reads_into_its_type_whatever_its_signature_bytes() {
    let record = bid("aGl");
    let problems = validate::validate_record(Bid::NSID, &record);
    let read = Bid::from_record_value(record);
    assert!(
        !problems.is_empty() || read.is_ok(),
        "valid, yet unreadable: {:?}",
        read.err()
    );
}

/// Found by `xrpc_answer`: the data model takes an integral float (`2.0`, and `-0`, which JSON
/// parsers read as `-0.0`) as an integer, so validation accepts it, and the generated `i64`
/// field refused it.
#[test]
fn an_integral_float_the_lexicon_accepts_reads_into_an_integer_field() {
    // Parsed from text: `json!` would make the Rust integer 0 of `-0`.
    let job: Value = serde_json::from_str(r#"{"phase": "Running", "failed": -0}"#).expect("JSON");
    let problems = validate::builtin()
        .map(|catalog| catalog.validate_xrpc(get_job::NSID, XrpcBody::Output, &job))
        .unwrap_or_default();
    let read = serde_json::from_value::<get_job::Output>(job);
    assert!(
        !problems.is_empty() || read.is_ok(),
        "valid, yet unreadable: {:?}",
        read.err()
    );

    let vm = json!({
        "$type": "com.publicdomainrelay.temp.compute.vm",
        "cpus": 2.0, "mem": "4G", "disk": "20G", "network": "500G",
        "location": {"country": "USA", "region": "west", "xZone": "b"},
        "role": "ci", "user_data": "#cloud-config\n"
    });
    let problems = validate::validate_record(Vm::NSID, &vm);
    let read = Vm::from_record_value(vm);
    assert!(
        !problems.is_empty() || read.is_ok(),
        "valid, yet unreadable: {:?}",
        read.err()
    );
}

/// Found by `data_model` (checked by hand first, then kept as a seed): `check` does not look
/// inside a blob, `to_ipld` converts every member of one.
#[test]
fn check_and_to_ipld_agree_on_a_blob_with_another_member() {
    for extra in [
        json!(1.5),
        json!({"$link": "not a cid"}),
        json!({"$type": ""}),
    ] {
        let value = json!({"avatar": {
            "$type": "blob",
            "ref": {"$link": "bafyreiclp443lavogvhj3d2ob2cxbfuscni2k5jk7bebjzg7khl3esabwq"},
            "mimeType": "image/png",
            "size": 1,
            "x": extra
        }});
        assert_eq!(
            data_model::check(&value).is_empty(),
            data_model::to_ipld(&value).is_ok(),
            "{value}"
        );
    }
}

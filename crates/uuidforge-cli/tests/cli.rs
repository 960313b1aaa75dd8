//! Runs the built `uuidforge` binary.

use predicates::prelude::*;

const A6: &str = "017F22E2-79B0-7CC3-98C4-DC0C0C07398F";

mod common;
use common::{json_lines, uuidforge};

#[test]
fn inspect_prints_rfc_vectors_with_their_precision() {
    uuidforge()
        .args([
            "inspect",
            A6,
            "C232AB00-9414-11EC-B3C8-9F6BDECED846",
            "1EC9414C-232A-6B00-B3C8-9F6BDECED846",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "2022-02-22T19:22:22.000Z (ms precision)",
        ))
        .stdout(predicate::str::contains(
            "2022-02-22T19:22:22.0000000Z (100ns precision)",
        ))
        .stdout(predicate::str::contains("7 (Unix Epoch time-based)"))
        .stdout(predicate::str::contains(
            "6 (reordered Gregorian time-based)",
        ));
}

#[test]
fn inspect_json_has_one_object_per_value() {
    let out = common::ok_stdout(&[
        "inspect",
        "--json",
        A6,
        "2489E9AD-2EE2-8E00-8EC9-32D5F69181C0",
        "01FWHE4YDGFK1SHH6W1G60EECF",
    ]);
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["timestamp"]["iso8601"], "2022-02-22T19:22:22.000Z");
    assert_eq!(lines[0]["timestamp"]["unix_ms"], 1645557742000u64);
    assert_eq!(lines[0]["layout_guess"]["values"], 1);
    assert_eq!(lines[1]["version"], 8);
    assert_eq!(
        lines[1]["v8_b1_timestamp"]["iso8601"],
        "2022-02-22T19:22:22.00000000Z"
    );
    assert_eq!(lines[1]["v8_draft"].as_array().unwrap().len(), 4);
    assert_eq!(lines[2]["form"], "base32");
    assert_eq!(lines[2]["uuid"], "017f22e2-79b0-7cc3-98c4-dc0c0c07398f");
}

#[test]
fn inspect_reads_draft01_values_as_the_draft() {
    // Draft-01, Figure 4 layout: 2022-02-22T19:22:22.123456 s, seq 7.
    let f = uuidforge::draft01::Draft01Fields {
        unix_seconds: 1_645_557_742,
        subsec_nanos: 123_456_789,
        seq: 7,
        random: 1,
    };
    let id =
        uuidforge::draft01::encode(uuidforge::draft01::Draft01Precision::Microsecond, f).unwrap();
    let out = common::ok_stdout(&["inspect", "--json", &id.to_string()]);
    let j = &json_lines(&out)[0];
    assert_eq!(j["layout_guess"]["layout"], "draft01");
    assert_eq!(j["draft01"]["us"]["iso8601"], "2022-02-22T19:22:22.123456Z");
    assert_eq!(j["draft01"]["ms"]["iso8601"], "2022-02-22T19:22:22.123Z");
}

#[test]
fn inspect_guesses_a_counter_from_consecutive_lines() {
    let lines: String = (0..6u64)
        .map(|i| {
            let c = 0x0AB_CDEF_0123u64 + i;
            let id = uuidforge::v7::from_unix_ms(
                1_700_000_000_000,
                (c >> 30) as u16,
                ((c & 0x3fff_ffff) << 32) | (i * 7919),
            )
            .unwrap();
            format!("{id}\n")
        })
        .collect();
    let out = uuidforge()
        .args(["inspect", "--json"])
        .write_stdin(lines)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let last = json_lines(&out).pop().unwrap();
    assert_eq!(last["layout_guess"]["layout"], "counter42");
    assert!(last["layout_guess"]["confidence"].as_f64().unwrap() > 0.9);
    assert_eq!(last["layout_reading"]["counter"], 0x0AB_CDEF_0123u64 + 5);
}

#[test]
fn inspect_with_a_forced_layout() {
    let pg18 = uuidforge::v7::from_unix_ns_method3(1_645_557_742_000_456_700, 12, 0).unwrap();
    uuidforge()
        .args(["inspect", "--layout", "fraction12", &pg18.to_string()])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("as fraction12")
                .and(predicate::str::contains("2022-02-22T19:22:22.0004565Z")),
        );
    uuidforge()
        .args(["inspect", "--layout", "nope", A6])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown layout \"nope\""))
        .stdout(predicate::str::is_empty());
}

#[test]
fn bad_lines_are_reported_and_the_rest_processed() {
    let input = format!("{A6}\n017f22e2-79b0-7cc3-98c4-dc0c0c07398g\n\nnot-a-uuid\n{A6}\n");
    uuidforge()
        .args(["convert", "--to", "base32"])
        .write_stdin(input)
        .assert()
        .code(2)
        .stdout("01FWHE4YDGFK1SHH6W1G60EECF\n01FWHE4YDGFK1SHH6W1G60EECF\n")
        .stderr(predicate::str::contains("line 2: invalid canonical UUID (8-4-4-4-12 hex): character 'g' at position 35, expected a hex digit"))
        .stderr(predicate::str::contains("line 4: invalid UUID: length 10"));
    uuidforge()
        .args(["inspect", "ok?", A6])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("argument 1:"))
        .stdout(predicate::str::contains(
            "017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        ));
}

#[test]
fn convert_writes_every_form_and_they_parse_back() {
    let forms = [
        ("canonical", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"),
        ("simple", "017f22e279b07cc398c4dc0c0c07398f"),
        ("braced", "{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}"),
        ("urn", "urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f"),
        ("base32", "01FWHE4YDGFK1SHH6W1G60EECF"),
    ];
    for (form, expected) in forms {
        uuidforge()
            .args(["convert", "--to", form, A6])
            .assert()
            .success()
            .stdout(format!("{expected}\n"));
        uuidforge()
            .args(["convert", "--to", "canonical", expected])
            .assert()
            .success()
            .stdout(format!("{}\n", forms[0].1));
    }
    let check = common::ok_stdout(&["convert", "--to", "base32-check", A6]);
    let check = String::from_utf8(check).unwrap();
    assert_eq!(check.trim().len(), 27);
    uuidforge()
        .args(["convert", "--to", "simple", check.trim()])
        .assert()
        .success();
    uuidforge()
        .args(["convert", "--to", "urn", "--upper", A6])
        .assert()
        .success()
        .stdout("urn:uuid:017F22E2-79B0-7CC3-98C4-DC0C0C07398F\n");
    let bin = common::ok_stdout(&["convert", "--to", "binary", A6, A6]);
    assert_eq!(bin.len(), 32);
    assert_eq!(
        &bin[..16],
        uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f").as_bytes()
    );
}

#[test]
fn convert_sort_order_adapters() {
    uuidforge()
        .args(["convert", "--to", "sqlserver", A6])
        .assert()
        .success()
        .stdout("8f39070c-0cdc-c498-7cc3-017f22e279b0\n");
    uuidforge()
        .args([
            "convert",
            "--to",
            "dotnet-bytes",
            "00112233-4455-6677-8899-aabbccddeeff",
        ])
        .assert()
        .success()
        .stdout("33221100554477668899aabbccddeeff\n");
    uuidforge()
        .args([
            "convert",
            "--to",
            "mysql-swap",
            "00112233-4455-6677-8899-aabbccddeeff",
        ])
        .assert()
        .success()
        .stdout("44556677-2233-0011-8899-aabbccddeeff\n");
}

#[test]
fn convert_uuid192_keeps_or_refuses_to_drop_the_segment() {
    use uuidforge::uuid192::{SegmentFields, Uuid192};
    let key = Uuid192::new(
        uuid::uuid!("017f22e2-79b0-7cc3-98c4-dc0c0c07398f"),
        SegmentFields::Raw { payload: 99 },
    )
    .unwrap();
    let text = key.to_string();
    uuidforge()
        .args(["convert", "--to", "uuid192-base32", &text])
        .assert()
        .success()
        .stdout(format!("{}\n", key.to_base32()));
    uuidforge()
        .args(["convert", "--to", "uuid192", &key.to_base32()])
        .assert()
        .success()
        .stdout(format!("{text}\n"));
    uuidforge()
        .args(["convert", "--to", "canonical", &text])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--uuid-part"))
        .stdout(predicate::str::is_empty());
    uuidforge()
        .args(["convert", "--to", "canonical", "--uuid-part", &text])
        .assert()
        .success()
        .stdout("017f22e2-79b0-7cc3-98c4-dc0c0c07398f\n");
    uuidforge()
        .args(["convert", "--to", "uuid192", A6])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has no segment"));
    let mut bad = text.clone();
    bad.replace_range(52..53, if text.ends_with('0') { "1" } else { "0" });
    uuidforge()
        .args(["convert", "--to", "uuid192", &bad])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("checksum"));
    let out = common::ok_stdout(&["inspect", "--json", &text]);
    let j = &json_lines(&out)[0];
    assert_eq!(j["uuid192"]["fields"]["structure"], "raw");
    assert_eq!(j["uuid192"]["fields"]["payload"], 99);
}

#[test]
fn unknown_format_is_a_usage_error() {
    uuidforge()
        .args(["convert", "--to", "hex", A6])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(
            "invalid value 'hex' for '--to <TO>'",
        ));
}

#[test]
fn broken_pipe_ends_quietly() {
    let (first, status, err) =
        common::read_then_close(&["convert", "--to", "base32"], Some(A6), 27);
    assert_eq!(&first, b"01FWHE4YDGFK1SHH6W1G60EECF\n");
    assert!(status.success(), "{status:?}, stderr: {err}");
    assert_eq!(err, "");
}

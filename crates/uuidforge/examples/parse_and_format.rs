//! Reading the forms people paste, writing the one a system wants, and
//! what a value says about itself.
//!
//!     cargo run -p uuidforge --example parse_and_format

use uuidforge::fmt::Format;
use uuidforge::inspect::inspect;
use uuidforge::parser::parse;

fn main() {
    // Canonical in any case, braced, URN, 32 hex digits, Crockford Base32:
    // the same value.
    let forms = [
        "017F22E2-79B0-7CC3-98C4-DC0C0C07398F",
        "{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}",
        "urn:uuid:017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
        "017f22e279b07cc398c4dc0c0c07398f",
        "01FWHE4YDGFK1SHH6W1G60EECF",
    ];
    let id = parse(forms[0]).expect("a UUID");
    for form in forms {
        assert_eq!(parse(form).expect("a UUID"), id);
    }
    for format in [
        Format::Canonical,
        Format::Base32,
        Format::Urn,
        Format::Braced,
    ] {
        println!("{:<10} {}", format!("{format:?}"), format.to_text(&id));
    }

    // A bad value names the position, the character and what was expected.
    let error = parse("017f22e2-79b0-7cc3-98c4-dc0c0c07398g").unwrap_err();
    println!("error: {error}");

    let report = inspect(&id);
    println!(
        "version {}, time {}",
        report.version,
        report.timestamp.expect("a UUIDv7 has a time")
    );
}

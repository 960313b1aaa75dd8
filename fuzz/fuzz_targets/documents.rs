//! Any bytes in any format, with and without places: the search never
//! panics, and every record and hit lies inside the document, in order.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::ops::ControlFlow;
use uuidforge_grep::{search, Event, Format, Matcher};

fuzz_target!(|data: &[u8]| {
    let formats = [Format::Json, Format::Ndjson, Format::Xml, Format::Html, Format::Csv, Format::Tsv, Format::Text];
    let mut matchers = vec![Matcher::default()];
    let mut placed = Matcher::default();
    placed.place.json_path = Some("$..id".parse().unwrap());
    placed.place.url = Some(uuidforge_grep::url::UrlPattern::parse("https://h/**").unwrap());
    matchers.push(placed);
    let mut tagged = Matcher::default();
    tagged.place.tag = Some("a".into());
    tagged.place.attr = Some("href".into());
    matchers.push(tagged);
    let mut column = Matcher::default();
    column.place.csv_column = Some("1".into());
    matchers.push(column);
    for format in formats.into_iter().chain([Format::sniff(data)]) {
        for matcher in &matchers {
            for every in [false, true] {
                let mut last = 0;
                search(data, format, matcher, every, &mut |event| {
                    match event {
                        Event::Record(r) => {
                            assert!(r.start <= r.end && r.end <= data.len());
                            for h in &r.hits {
                                assert!(h.start < h.end && h.end <= data.len() && h.start >= last);
                                last = h.start;
                            }
                        }
                        Event::Header(a, b) => assert!(a <= b && b <= data.len()),
                        Event::Error(offset, _) => assert!(offset <= data.len()),
                    }
                    ControlFlow::Continue(())
                });
            }
        }
    }
});

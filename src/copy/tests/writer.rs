//! Writing text, CSV and binary as PostgreSQL's COPY TO does.

use super::*;
use crate::copy::tests::binary::{binary, binary_file, TUPLE};

#[test]
fn text_writer_escapes_as_postgres() {
    let out = write(&text(), &[], &[&[Some("a\u{8}\u{c}\n\r\t\u{b}\\b\u{1}é"), None, Some("")]]);
    assert_eq!(out, b"a\\b\\f\\n\\r\\t\\v\\\\b\x01\xc3\xa9\t\\N\t\n");
    let o = opts(&[("delimiter", Some("|")), ("null", Some(""))]);
    assert_eq!(write(&o, &[], &[&[Some("a|b\tc"), None]]), b"a\\|b\\tc|\n");
    let o = opts(&[("delimiter", Some("\u{1}"))]);
    assert_eq!(write(&o, &[], &[&[Some("a\u{1}b")]]), b"a\\\x01b\n");
}

#[test]
fn csv_writer_quotes_only_when_needed() {
    let values = [Some("plain"), Some(""), None, Some("a,b"), Some("say \"hi\""), Some("cr\r"), Some("lf\n"), Some("\\."), Some("a\\b")];
    let out = write(&csv(), &[], &[&values]);
    assert_eq!(out, b"plain,\"\",,\"a,b\",\"say \"\"hi\"\"\",\"cr\r\",\"lf\n\",\\.,a\\b\n");
    // A lone `\.` is quoted when the row has one column, lest it read as the end marker.
    assert_eq!(write(&csv(), &[], &[&[Some("\\.")]]), b"\"\\.\"\n");
    let o = opts(&[("format", Some("csv")), ("quote", Some("'")), ("escape", Some("\\")), ("null", Some("NULL"))]);
    assert_eq!(write(&o, &[], &[&[Some("it's a\\b"), Some("NULL"), None, Some("x\\y")]]), b"'it\\'s a\\\\b','NULL',NULL,x\\y\n");
}

#[test]
fn csv_force_quote_quotes_non_null_values_but_not_the_header() {
    let mut o = opts(&[("format", Some("csv")), ("header", Some("on"))]);
    o.force_quote = vec![true, false, true];
    assert_eq!(
        write(&o, &["id", "b", "c"], &[&[Some("1"), Some("x"), None], &[Some(""), Some(""), Some("q\"")]]),
        b"id,b,c\n\"1\",x,\n\"\",\"\",\"q\"\"\"\n"
    );
}

#[test]
fn header_lines() {
    let o = opts(&[("format", Some("csv")), ("header", Some("on"))]);
    assert_eq!(write(&o, &["id", "a,b"], &[]), b"id,\"a,b\"\n");
    let o = opts(&[("header", Some("1"))]);
    assert_eq!(write(&o, &["id", "a\tb"], &[]), b"id\ta\\tb\n");
    assert_eq!(write(&csv(), &["id"], &[]), b"");
}

#[test]
fn binary_writer_layout() {
    let out = write(&binary(), &["a", "b"], &[&[Some("ab"), None]]);
    assert_eq!(out, binary_file(&[TUPLE, &[0xff, 0xff]].concat()));
    let empty = CopyWriter::new(Vec::new(), binary()).finish().unwrap();
    assert_eq!(empty, binary_file(&[0xff, 0xff]));
}

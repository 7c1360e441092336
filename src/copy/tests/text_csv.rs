//! Reading text and CSV: escapes, NULLs, encoding, line endings, the end marker,
//! quoting, row shape and CONTEXT lines.

use super::*;
use crate::copy::Field;

#[test]
fn text_letter_escapes() {
    assert_eq!(text_value("\\b\\f\\n\\r\\t\\v\n"), "\u{8}\u{c}\n\r\t\u{b}");
}

#[test]
fn text_octal_escapes_take_one_to_three_digits() {
    assert_eq!(text_value("\\1|\\12|\\101|\\1011|\\8\n"), "\u{1}|\n|A|A1|8");
    assert_eq!(text_value("\\303\\251\n"), "é");
}

#[test]
fn text_hex_escapes_take_one_or_two_digits() {
    assert_eq!(text_value("\\x4|\\x41|\\x414|\\xg|\\xC3\\xA9\n"), "\u{4}|A|A4|xg|é");
}

#[test]
fn text_other_escaped_chars_stand_for_themselves() {
    assert_eq!(text_value("\\a\\\\\\N\\é\\,\n"), "a\\Né,");
    let rows = read(b"a\\\tb\tc\n", &text(), 2).unwrap();
    assert_eq!(rows, vec![row(&[Some("a\tb"), Some("c")])]);
}

#[test]
fn text_escaped_line_ending_is_data() {
    let rows = read(b"a\\\nb\tc\\\r\n", &text(), 2).unwrap();
    assert_eq!(rows, vec![row(&[Some("a\nb"), Some("c\r")])]);
}

#[test]
fn text_backslash_at_end_of_data_is_dropped() {
    assert_eq!(read(b"ab\\", &text(), 1).unwrap(), vec![row(&[Some("ab")])]);
}

#[test]
fn text_null_is_matched_before_de_escaping() {
    let rows = read(b"\\N\t\\\\N\t\tN\n", &text(), 4).unwrap();
    assert_eq!(rows, vec![row(&[None, Some("\\N"), Some(""), Some("N")])]);
    let o = opts(&[("null", Some("NULL")), ("delimiter", Some("|"))]);
    let rows = read(b"NULL|\\NULL|nULL|\n", &o, 4).unwrap();
    assert_eq!(rows, vec![row(&[None, Some("NULL"), Some("nULL"), Some("")])]);
}

#[test]
fn text_escape_making_invalid_utf8_is_rejected_with_line_context() {
    let err = read_err(b"ok\tok\n\\xff\tx\n", &text(), 2);
    let msg = "invalid byte sequence for encoding \"UTF8\": 0xff";
    assert_error(&err, "22021", msg, Some("COPY t, line 2: \"\\xff\tx\""));
    let err = read_err(b"a\\0b\n", &text(), 1);
    assert_eq!(err.message, "invalid byte sequence for encoding \"UTF8\": 0x00");
    let err = read_err(b"\\xe2\\x82z\n", &text(), 1);
    assert_eq!(err.message, "invalid byte sequence for encoding \"UTF8\": 0xe2 0x82 0x7a");
    // A NULL field is not checked.
    let o = opts(&[("null", Some("\\xff"))]);
    assert_eq!(read(b"\\xff\n", &o, 1).unwrap(), vec![row(&[None])]);
}

// ---- text and CSV: encoding of the raw input ----

#[test]
fn invalid_utf8_in_input_names_the_line() {
    let err = read_err(b"a\nb\xff\xfe\n", &text(), 1);
    let msg = "invalid byte sequence for encoding \"UTF8\": 0xff";
    assert_error(&err, "22021", msg, Some("COPY t, line 2"));
    let err = read_err(b"a\n\xe2\x82\n", &text(), 1);
    assert_eq!(err.message, "invalid byte sequence for encoding \"UTF8\": 0xe2 0x82 0x0a");
    let err = read_err(b"a\n\xe2\x82", &text(), 1);
    assert_eq!(err.message, "invalid byte sequence for encoding \"UTF8\": 0xe2 0x82");
    let err = read_err(b"a\0\n", &csv(), 1);
    assert_error(&err, "22021", "invalid byte sequence for encoding \"UTF8\": 0x00", Some("COPY t, line 1"));
    // CSV counts quoted line breaks before the bad byte.
    let err = read_err(b"h\n\"a\nb\xff\"\n", &csv(), 1);
    assert_eq!(err.context.as_deref(), Some("COPY t, line 3"));
    // PostgreSQL looks past a first-line \r for \n, reaching the bad byte on line 1.
    assert_eq!(read_err(b"a\r\xff", &text(), 1).context.as_deref(), Some("COPY t, line 1"));
}

#[test]
fn bytes_after_the_end_marker_are_not_read() {
    assert_eq!(read(b"a\n\\.\n\xff", &text(), 1).unwrap(), vec![row(&[Some("a")])]);
}

// ---- text and CSV: line endings ----

#[test]
fn crlf_and_cr_line_endings() {
    let want = vec![row(&[Some("a"), Some("b")]), row(&[Some("c"), Some("d")])];
    assert_eq!(read(b"a\tb\r\nc\td\r\n", &text(), 2).unwrap(), want);
    assert_eq!(read(b"a\tb\rc\td\r", &text(), 2).unwrap(), want);
    assert_eq!(read(b"a,b\r\nc,d", &csv(), 2).unwrap(), want);
}

#[test]
fn inconsistent_line_endings_are_errors() {
    let cr = "literal carriage return found in data";
    let nl = "literal newline found in data";
    let cases: [(&[u8], &str); 4] = [(b"a\nb\r\n", cr), (b"a\r\nb\rc\r\n", cr), (b"a\r\nb\n", nl), (b"a\rb\n", nl)];
    for (data, message) in cases {
        let err = read_err(data, &text(), 1);
        assert_error(&err, "22P04", message, Some("COPY t, line 2"));
    }
    let err = read_err(b"a\nb\r\n", &text(), 1);
    assert_eq!(err.hint.as_deref(), Some("Use \"\\r\" to represent carriage return."));
    let err = read_err(b"a\r\nb\n", &csv(), 1);
    assert_eq!(err.message, "unquoted newline found in data");
    assert_eq!(err.hint.as_deref(), Some("Use quoted CSV field to represent newline."));
}

// ---- end-of-data marker ----

#[test]
fn end_marker_ends_text_data() {
    let a = vec![row(&[Some("a")])];
    assert_eq!(read(b"a\n\\.\nb\n", &text(), 1).unwrap(), a);
    assert_eq!(read(b"a\r\n\\.\r\nb\r\n", &text(), 1).unwrap(), a);
    assert_eq!(read(b"a\\.\nb\n", &text(), 1).unwrap(), a);
    assert_eq!(read(b"\\\\.\n", &text(), 1).unwrap(), vec![row(&[Some("\\.")])]);
    assert_eq!(read_err(b"a\\.b\n", &text(), 1).message, "end-of-copy marker corrupt");
}

#[test]
fn bad_end_markers_in_text() {
    let corrupt = "end-of-copy marker corrupt";
    let style = "end-of-copy marker does not match previous newline style";
    let cases: [(&[u8], &str); 5] =
        [(b"a\n\\.x\n", corrupt), (b"a\n\\.", corrupt), (b"a\r\n\\.\n", style), (b"a\r\n\\.x", corrupt), (b"a\n\\.\r", style)];
    for (data, message) in cases {
        assert_error(&read_err(data, &text(), 1), "22P04", message, Some("COPY t, line 2"));
    }
}

#[test]
fn end_marker_in_csv_only_alone_on_a_line() {
    let data = b"\\.x,y\n\"\\.\",z\n\\.\nnot,read\n";
    let rows = read(data, &csv(), 2).unwrap();
    assert_eq!(rows, vec![row(&[Some("\\.x"), Some("y")]), row(&[Some("\\."), Some("z")])]);
    assert_eq!(read(b"\\.", &csv(), 1).unwrap(), vec![row(&[Some("\\.")])]);
    assert_eq!(read(b"a\r\n\\.\r\n", &csv(), 1).unwrap(), vec![row(&[Some("a")])]);
}

// ---- CSV ----

#[test]
fn csv_quoting_rules() {
    let data = b"\"a,b\",\"say \"\"hi\"\"\",,\"\",x\"y,z\"w\n";
    let rows = read(data, &csv(), 5).unwrap();
    assert_eq!(rows, vec![row(&[Some("a,b"), Some("say \"hi\""), None, Some(""), Some("xy,zw")])]);
}

#[test]
fn csv_null_only_when_unquoted() {
    let o = opts(&[("format", Some("csv")), ("null", Some("NULL"))]);
    let rows = read(b"NULL,\"NULL\",,\"\"\n", &o, 4).unwrap();
    assert_eq!(rows, vec![row(&[None, Some("NULL"), Some(""), Some("")])]);
}

#[test]
fn csv_quoted_line_breaks_count_as_lines() {
    // As in PostgreSQL, quoted line feeds in the first record are not counted: the
    // line-ending style is not known yet, and only carriage returns count until it is.
    let data = b"1,\"two\nlines\"\n2,\"cr\r\nlf\"\n3\n";
    let err = read_err(data, &csv(), 2);
    assert_error(&err, "22P04", "missing data for column \"c1\"", Some("COPY t, line 4: \"3\""));
    let rows = read(&data[..data.len() - 2], &csv(), 2).unwrap();
    assert_eq!(rows[0], row(&[Some("1"), Some("two\nlines")]));
    assert_eq!(rows[1], row(&[Some("2"), Some("cr\r\nlf")]));
}

#[test]
fn csv_unterminated_quote_shows_the_record() {
    let err = read_err(b"h\n\"open\nstill", &csv(), 1);
    assert_error(&err, "22P04", "unterminated CSV quoted field", Some("COPY t, line 3: \"\"open\nstill\""));
}

#[test]
fn csv_custom_delimiter_quote_and_escape() {
    let o = opts(&[("format", Some("csv")), ("delimiter", Some("|")), ("quote", Some("'")), ("escape", Some("\\"))]);
    let data = b"'it\\'s'|'a\\\\b'|'a\\b'|a\\b|'x''y'\n";
    let rows = read(data, &o, 5).unwrap();
    assert_eq!(rows, vec![row(&[Some("it's"), Some("a\\b"), Some("a\\b"), Some("a\\b"), Some("xy")])]);
}

#[test]
fn header_line_is_skipped() {
    let o = opts(&[("format", Some("csv")), ("header", Some("true"))]);
    let rows = read(b"\"x\ny\",z\n1,2\n", &o, 2).unwrap();
    assert_eq!(rows, vec![row(&[Some("1"), Some("2")])]);
    let mut reader = CopyReader::new(&b"h\n1\n"[..], opts(&[("header", None)]), "t", &cols(1));
    assert_eq!(reader.next_row().unwrap().unwrap().line_no(), 2);
    assert_eq!(read(b"only header", &o, 2).unwrap(), Rows::new());
}

// ---- row shape ----

#[test]
fn missing_and_extra_fields() {
    let err = read_err(b"1\t2\n", &text(), 3);
    assert_error(&err, "22P04", "missing data for column \"c2\"", Some("COPY t, line 1: \"1\t2\""));
    let err = read_err(b"1\t2\t3\n", &text(), 2);
    assert_error(&err, "22P04", "extra data after last expected column", Some("COPY t, line 1: \"1\t2\t3\""));
    let err = read_err(b"\n", &text(), 2);
    assert_eq!(err.message, "missing data for column \"c1\"");
}

#[test]
fn partial_rows_leave_missing_data_to_the_caller() {
    let mut reader = CopyReader::new(&b"x\n"[..], text(), "t", &cols(2));
    let row = reader.next_row_partial().unwrap().unwrap();
    assert_eq!(row.len(), 1);
    let err = row.missing_data_error().unwrap();
    assert_error(&err, "22P04", "missing data for column \"c1\"", Some("COPY t, line 1: \"x\""));
}

#[test]
fn zero_column_rows_must_be_empty() {
    assert_eq!(read(b"\n\n", &text(), 0).unwrap(), vec![vec![], vec![]]);
    assert_eq!(read_err(b"x\n", &csv(), 0).message, "extra data after last expected column");
}

#[test]
fn context_lines_are_cut_at_100_bytes_on_a_character_boundary() {
    let long = format!("{}é{}", "x".repeat(99), "y".repeat(50));
    let data = format!("{long}\tz\n");
    let err = read_err(data.as_bytes(), &text(), 1);
    assert_eq!(&*err.context.clone().unwrap(), format!("COPY t, line 1: \"{}...\"", "x".repeat(99)));
    let mut reader = CopyReader::new(data.as_bytes(), text(), "t", &cols(2));
    assert!(reader.next_row().unwrap().is_some());
    assert_eq!(reader.column_context(0), format!("COPY t, line 1, column c0: \"{}...\"", "x".repeat(99)));
}

#[test]
fn column_context_shows_value_or_null() {
    let mut reader = CopyReader::new(&b"a\t\\N\n"[..], text(), "t", &cols(2));
    let row = reader.next_row().unwrap().unwrap();
    assert_eq!(row.field(0), Some(Field::Text("a")));
    assert_eq!(row.column_context(1), "COPY t, line 1, column c1: null input");
    assert_eq!(reader.column_context(0), "COPY t, line 1, column c0: \"a\"");
    assert_eq!(reader.line_context(), "COPY t, line 1: \"a\t\\N\"");
}

#[test]
fn csv_force_not_null_and_force_null() {
    // PostgreSQL's NextCopyFrom: FORCE_NOT_NULL turns an unquoted null string into that
    // string; FORCE_NULL turns a quoted value equal to it into NULL; with both, the first
    // applies to unquoted fields and the second to quoted ones.
    let mut o = opts(&[("format", Some("csv")), ("null", Some("NA"))]);
    o.force_not_null = vec![true, false, true];
    o.force_null = vec![false, true, true];
    let rows = read(b"NA,NA,NA\n\"NA\",\"NA\",\"NA\"\nx,\"\",\"y\"\n", &o, 3).unwrap();
    assert_eq!(rows, vec![row(&[Some("NA"), None, Some("NA")]), row(&[Some("NA"), None, None]), row(&[Some("x"), Some(""), Some("y")]),]);
    // An escaped quote inside: the value compared is the de-quoted one.
    let mut o = opts(&[("format", Some("csv")), ("null", Some("a\"b")), ("quote", Some("'"))]);
    o.force_null = vec![true];
    assert_eq!(read(b"'a\"b'\n", &o, 1).unwrap(), vec![row(&[None])]);
}

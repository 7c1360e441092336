//! Reading binary COPY data: header, tuples, trailer and their errors.

use super::*;
use crate::copy::Field;

pub(super) fn binary_file(body: &[u8]) -> Vec<u8> {
    let mut data = b"PGCOPY\n\xff\r\n\0".to_vec();
    data.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
    data.extend_from_slice(body);
    data
}

/// A tuple of two fields: 'ab' and NULL.
pub(super) const TUPLE: &[u8] = &[0, 2, 0, 0, 0, 2, b'a', b'b', 0xff, 0xff, 0xff, 0xff];

pub(super) fn binary() -> CopyOptions {
    CopyOptions::for_format(CopyFormat::Binary)
}

#[test]
fn binary_tuples_and_trailer() {
    let data = binary_file(&[TUPLE, TUPLE, &[0xff, 0xff]].concat());
    let mut reader = CopyReader::new(&data[..], binary(), "t", &cols(2));
    let row = reader.next_row().unwrap().unwrap();
    assert_eq!(row.field(0), Some(Field::Bytes(b"ab")));
    assert_eq!(row.field(1), None);
    assert_eq!(reader.next_row().unwrap().unwrap().line_no(), 2);
    assert!(reader.next_row().unwrap().is_none());
    // Without a trailer, the end of input at a tuple boundary ends the data too.
    assert_eq!(read(&binary_file(&[TUPLE, &[0]].concat()), &binary(), 2).unwrap().len(), 1);
}

#[test]
fn binary_header_errors() {
    let mut with_ext = binary_file(TUPLE);
    with_ext[18] = 3;
    with_ext.splice(19..19, *b"xyz");
    assert_eq!(read(&with_ext, &binary(), 2).unwrap().len(), 1);
    let flags = |byte: usize, value: u8| {
        let mut d = binary_file(b"");
        d[byte] = value;
        read(&d, &binary(), 2).map_err(|e| e.message.clone())
    };
    assert_eq!(flags(12, 1).unwrap_err(), "invalid COPY file header (WITH OIDS)");
    assert_eq!(flags(12, 2).unwrap_err(), "unrecognized critical flags in COPY file header");
    assert_eq!(flags(11, 0x80).unwrap_err(), "unrecognized critical flags in COPY file header");
    assert_eq!(flags(14, 1), Ok(Rows::new()));
    assert_eq!(flags(0, b'X').unwrap_err(), "COPY file signature not recognized");
    assert_eq!(read_err(&with_ext[..20], &binary(), 2).message, "invalid COPY file header (wrong length)");
    assert_eq!(read_err(&with_ext[..13], &binary(), 2).message, "invalid COPY file header (missing flags)");
    assert_eq!(read_err(&with_ext[..17], &binary(), 2).message, "invalid COPY file header (missing length)");
    let err = read_err(b"PGCOPY\n", &binary(), 2);
    assert_error(&err, "22P04", "COPY file signature not recognized", None);
}

#[test]
fn binary_tuple_errors() {
    let err = read_err(&binary_file(TUPLE), &binary(), 3);
    assert_error(&err, "22P04", "row field count is 2, expected 3", Some("COPY t, line 1"));
    let err = read_err(&binary_file(&[TUPLE, &TUPLE[..7]].concat()), &binary(), 2);
    assert_error(&err, "22P04", "unexpected EOF in COPY data", Some("COPY t, line 2, column c0"));
    let err = read_err(&binary_file(&TUPLE[..10]), &binary(), 2);
    assert_error(&err, "22P04", "unexpected EOF in COPY data", Some("COPY t, line 1, column c1"));
    let err = read_err(&binary_file(&[0, 1, 0xff, 0xff, 0xff, 0xfe]), &binary(), 1);
    assert_error(&err, "22P04", "invalid field size", Some("COPY t, line 1, column c0"));
    let err = read_err(&binary_file(&[0, 1, 0x40, 0, 0, 0]), &binary(), 1);
    assert_error(&err, "54000", "out of memory", Some("COPY t, line 1, column c0"));
    let err = read_err(&binary_file(&[TUPLE, &[0xff, 0xff, 0]].concat()), &binary(), 2);
    assert_error(&err, "22P04", "received copy data after EOF marker", Some("COPY t, line 2"));
}

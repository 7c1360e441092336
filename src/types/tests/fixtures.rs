//! Round trips over the 5,000-row `types` table exported by PostgreSQL in COPY text and
//! COPY BINARY format.

use super::{fixture, fixture_columns, output};

/// Undoes COPY text escaping of one field (`\N` is handled by the caller).
fn copy_unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        if field[i] != b'\\' || i + 1 == field.len() {
            out.push(field[i]);
            i += 1;
            continue;
        }
        let c = field[i + 1];
        i += 2;
        match c {
            b't' => out.push(b'\t'),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0c),
            b'v' => out.push(0x0b),
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                for _ in 0..2 {
                    match field.get(i) {
                        Some(d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
    out
}

/// The fixture's lines split into fields: `None` for `\N`, else the unescaped text.
fn text_rows() -> Vec<Vec<Option<String>>> {
    let data = fixture("types.text");
    data.split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            line.split(|&b| b == b'\t')
                .map(|f| (f != b"\\N").then(|| String::from_utf8(copy_unescape(f)).unwrap_or_else(|e| panic!("{e}"))))
                .collect()
        })
        .collect()
}

#[test]
fn text_fixture_roundtrips() {
    let cols = fixture_columns();
    let rows = text_rows();
    assert_eq!(rows.len(), 5000);
    let mut checked = 0;
    for (n, row) in rows.iter().enumerate() {
        assert_eq!(row.len(), cols.len(), "line {}", n + 1);
        for (ty, field) in cols.iter().zip(row) {
            let Some(s) = field else { continue };
            let mut stored = Vec::new();
            ty.input_text(s, &mut stored).unwrap_or_else(|e| panic!("line {} {}: {s:?}: {e}", n + 1, ty.name()));
            assert_eq!(&output(*ty, &stored), s, "line {} {}", n + 1, ty.name());
            let mut wire = Vec::new();
            ty.send_binary(&stored, &mut wire);
            let mut back = Vec::new();
            ty.recv_binary(&wire, &mut back).unwrap_or_else(|e| panic!("line {} {}: recv: {e}", n + 1, ty.name()));
            assert_eq!(back, stored, "line {} {}", n + 1, ty.name());
            checked += 1;
        }
    }
    assert!(checked > 55_000, "only {checked} fields checked");
}

/// Parses PostgreSQL's COPY BINARY format into rows of optional field bytes.
fn binary_rows(data: &[u8]) -> Vec<Vec<Option<&[u8]>>> {
    const SIGNATURE: &[u8] = b"PGCOPY\n\xff\r\n\0";
    assert!(data.starts_with(SIGNATURE), "bad signature");
    let be32 = |at: usize| i32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
    let ext_len = usize::try_from(be32(SIGNATURE.len() + 4)).unwrap_or(0);
    let mut pos = SIGNATURE.len() + 8 + ext_len;
    let mut rows = Vec::new();
    loop {
        let nfields = i16::from_be_bytes([data[pos], data[pos + 1]]);
        pos += 2;
        if nfields == -1 {
            break;
        }
        let mut row = Vec::new();
        for _ in 0..nfields {
            let len = be32(pos);
            pos += 4;
            if len < 0 {
                row.push(None);
            } else {
                let len = len as usize;
                row.push(Some(&data[pos..pos + len]));
                pos += len;
            }
        }
        rows.push(row);
    }
    rows
}

#[test]
fn binary_fixture_matches_postgres_send_and_text() {
    let cols = fixture_columns();
    let data = fixture("types.bin");
    let bin = binary_rows(&data);
    let text = text_rows();
    assert_eq!(bin.len(), text.len());
    for (n, (brow, trow)) in bin.iter().zip(&text).enumerate() {
        for ((ty, wire), field) in cols.iter().zip(brow).zip(trow) {
            assert_eq!(wire.is_none(), field.is_none(), "row {} {}", n + 1, ty.name());
            let (Some(wire), Some(s)) = (wire, field) else {
                continue;
            };
            let mut stored = Vec::new();
            ty.recv_binary(wire, &mut stored).unwrap_or_else(|e| panic!("row {} {}: {e}", n + 1, ty.name()));
            let mut resent = Vec::new();
            ty.send_binary(&stored, &mut resent);
            assert_eq!(&resent[..], *wire, "row {} {}", n + 1, ty.name());
            assert_eq!(&output(*ty, &stored), s, "row {} {}", n + 1, ty.name());
            let mut from_text = Vec::new();
            ty.input_text(s, &mut from_text).unwrap_or_else(|e| panic!("row {} {}: {e}", n + 1, ty.name()));
            assert_eq!(from_text, stored, "row {} {}", n + 1, ty.name());
        }
    }
}

#[test]
fn unescapes_copy_text() {
    assert_eq!(copy_unescape(b"a\\\\b\\tc\\nd\\101"), b"a\\b\tc\ndA");
    assert_eq!(copy_unescape(b"\\\\x00ff"), b"\\x00ff");
}

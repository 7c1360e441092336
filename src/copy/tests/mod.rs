//! Unit tests: one per escape, quoting, line-ending and framing rule of the readers and
//! writer, and the option checks (expected behaviour is PostgreSQL 15's); tests against
//! the files PostgreSQL wrote; a randomized round trip; an ignored throughput report.

mod binary;
mod fixtures;
mod options;
mod text_csv;
mod writer;

use super::{CopyFormat, CopyOptions, CopyReader, CopyWriter};
use crate::error::{PgError, Result};

type Rows = Vec<Vec<Option<String>>>;

/// COPY options as the SQL parser hands them over.
pub(super) type Pairs<'a> = &'a [(&'a str, Option<&'a str>)];

pub(super) fn opts(pairs: Pairs) -> CopyOptions {
    let pairs: Vec<(String, Option<String>)> = pairs.iter().map(|(k, v)| (k.to_string(), v.map(str::to_string))).collect();
    CopyOptions::from_pairs(&pairs).unwrap()
}

pub(super) fn text() -> CopyOptions {
    CopyOptions::default()
}

pub(super) fn csv() -> CopyOptions {
    CopyOptions::for_format(CopyFormat::Csv)
}

pub(super) fn cols(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("c{i}")).collect()
}

pub(super) fn read(data: &[u8], opts: &CopyOptions, ncols: usize) -> Result<Rows> {
    let mut reader = CopyReader::new(data, opts.clone(), "t", &cols(ncols));
    let mut rows = Vec::new();
    while let Some(row) = reader.next_row()? {
        rows.push(row.iter().map(|f| f.map(|f| String::from_utf8_lossy(f.as_bytes()).into_owned())).collect());
    }
    Ok(rows)
}

pub(super) fn read_err(data: &[u8], opts: &CopyOptions, ncols: usize) -> PgError {
    read(data, opts, ncols).expect_err("expected an error")
}

/// One single-column text row, de-escaped.
pub(super) fn text_value(raw: &str) -> String {
    let rows = read(raw.as_bytes(), &text(), 1).unwrap();
    rows[0][0].clone().unwrap()
}

pub(super) fn row(values: &[Option<&str>]) -> Vec<Option<String>> {
    values.iter().map(|v| v.map(str::to_string)).collect()
}

pub(super) fn write(opts: &CopyOptions, columns: &[&str], rows: &[&[Option<&str>]]) -> Vec<u8> {
    let mut writer = CopyWriter::new(Vec::new(), opts.clone());
    let columns: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
    writer.begin(&columns).unwrap();
    for r in rows {
        let fields: Vec<Option<&[u8]>> = r.iter().map(|v| v.map(str::as_bytes)).collect();
        writer.write_row(&fields).unwrap();
    }
    writer.finish().unwrap()
}

pub(super) fn assert_error(err: &PgError, code: &str, message: &str, context: Option<&str>) {
    assert_eq!((err.code, err.message.as_str()), (code, message), "{err}");
    assert_eq!(err.context.as_deref(), context, "{err}");
}

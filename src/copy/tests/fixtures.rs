//! Tests against files written by PostgreSQL 15 (tests/fixtures/postgres; its README.md says how
//! they were made), a randomized writer-then-reader round trip in all three formats, and
//! an ignored throughput report:
//! `cargo test --release --lib copy::tests::fixtures::throughput -- --ignored --nocapture`.

use std::path::PathBuf;
use std::time::Instant;

use crate::copy::{CopyFormat, CopyOptions, CopyReader, CopyWriter, Field};
use crate::error::{sqlstate, PgError};

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/postgres").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The column names of `types` (types.columns: "id integer NOT NULL, flag boolean, ...").
fn columns() -> Vec<String> {
    let spec = String::from_utf8(fixture("types.columns")).unwrap();
    spec.trim().split(", ").map(|c| c.split(' ').next().unwrap().to_string()).collect()
}

fn options(format: CopyFormat, header: bool) -> CopyOptions {
    CopyOptions { header, ..CopyOptions::for_format(format) }
}

/// Reads `input` and writes every row straight back; returns the output and row count.
fn read_then_write(input: &[u8], opts: &CopyOptions, cols: &[String]) -> (Vec<u8>, usize) {
    let mut reader = CopyReader::new(input, opts.clone(), "types", cols);
    let mut writer = CopyWriter::new(Vec::new(), opts.clone());
    writer.begin(cols).unwrap();
    let mut rows = 0;
    while let Some(row) = reader.next_row().unwrap() {
        let fields: Vec<Option<&[u8]>> = row.iter().map(|f| f.map(|f| f.as_bytes())).collect();
        writer.write_row(&fields).unwrap();
        rows += 1;
    }
    (writer.finish().unwrap(), rows)
}

fn assert_same_bytes(out: &[u8], input: &[u8], name: &str) {
    if out != input {
        let at = out.iter().zip(input).position(|(a, b)| a != b).unwrap_or(out.len().min(input.len()));
        let show = |b: &[u8]| String::from_utf8_lossy(&b[at.saturating_sub(40)..(at + 40).min(b.len())]).into_owned();
        panic!("{name}: output differs at byte {at}:\n got {:?}\nwant {:?}", show(out), show(input));
    }
}

#[test]
fn postgres_files_round_trip_byte_for_byte() {
    let cols = columns();
    for (name, format, header) in
        [("types.text", CopyFormat::Text, false), ("types.csv", CopyFormat::Csv, true), ("types.bin", CopyFormat::Binary, false)]
    {
        let input = fixture(name);
        let (out, rows) = read_then_write(&input, &options(format, header), &cols);
        assert_eq!(rows, 5000, "{name}");
        assert_same_bytes(&out, &input, name);
    }
}

#[test]
fn postgres_files_agree_across_formats() {
    let cols = columns();
    let read = |name: &str, format, header| {
        let input = fixture(name);
        let mut reader = CopyReader::new(&input[..], options(format, header), "types", &cols);
        let mut rows = Vec::new();
        while let Some(row) = reader.next_row().unwrap() {
            let texts: Vec<Option<String>> = row.iter().map(|f| f.map(|f| String::from_utf8_lossy(f.as_bytes()).into_owned())).collect();
            rows.push((row.line_no(), texts));
        }
        rows
    };
    let text = read("types.text", CopyFormat::Text, false);
    let csv = read("types.csv", CopyFormat::Csv, true);
    assert_eq!(text.len(), csv.len());
    for ((_, t), (_, c)) in text.iter().zip(&csv) {
        assert_eq!(t, c);
    }
    // Quoted newlines make CSV lines run ahead of rows; text lines are rows.
    assert_eq!(text.last().unwrap().0, 5000);
    assert_eq!(csv.last().unwrap().0, 5073);
    let bin = read("types.bin", CopyFormat::Binary, false);
    assert_eq!(bin.len(), 5000);
    assert_eq!(bin[4999].0, 5000);
    // name (text) is sent as its UTF-8 bytes.
    assert_eq!(bin[66].1[6], text[66].1[6]);
}

#[test]
fn reads_do_not_depend_on_how_input_is_cut() {
    let cols = columns();
    for (name, format, header) in
        [("types.text", CopyFormat::Text, false), ("types.csv", CopyFormat::Csv, true), ("types.bin", CopyFormat::Binary, false)]
    {
        let input = fixture(name);
        let whole = read_then_write(&input, &options(format, header), &cols).0;
        for max in [1, 7, 4096] {
            let source = Chunked { data: &input, max };
            let mut reader = CopyReader::new(source, options(format, header), "types", &cols);
            let mut writer = CopyWriter::new(Vec::new(), options(format, header));
            writer.begin(&cols).unwrap();
            while let Some(row) = reader.next_row().unwrap() {
                let fields: Vec<Option<&[u8]>> = row.iter().map(|f| f.map(|f| f.as_bytes())).collect();
                writer.write_row(&fields).unwrap();
            }
            let out = writer.finish().unwrap();
            assert_same_bytes(&out, &whole, &format!("{name}, {max} bytes per read"));
        }
    }
}

#[test]
fn long_values_cross_buffer_boundaries() {
    let long: String = PIECES.iter().cycle().take(60_000).copied().collect();
    let cols = vec!["a".to_string(), "b".to_string()];
    for format in [CopyFormat::Text, CopyFormat::Csv, CopyFormat::Binary] {
        let opts = options(format, false);
        let mut writer = CopyWriter::new(Vec::new(), opts.clone());
        writer.begin(&cols).unwrap();
        for _ in 0..3 {
            writer.write_row(&[Some(long.as_bytes()), None]).unwrap();
        }
        let data = writer.finish().unwrap();
        assert!(data.len() > 3 * long.len());
        let mut reader = CopyReader::new(Chunked { data: &data, max: 1000 }, opts, "t", &cols);
        let mut rows = 0;
        while let Some(row) = reader.next_row().unwrap() {
            assert_eq!(row.field(0).unwrap().as_bytes(), long.as_bytes(), "{format:?}");
            assert_eq!(row.field(1), None);
            rows += 1;
        }
        assert_eq!(rows, 3, "{format:?}");
    }
}

/// One section of bad/EXPECTED_POSTGRES_ERRORS.txt.
struct Expected {
    error: String,
    context: Option<String>,
}

fn expected(file: &str) -> Expected {
    let all = String::from_utf8(fixture("bad/EXPECTED_POSTGRES_ERRORS.txt")).unwrap();
    let start = all.find(&format!("== {file}\n")).unwrap() + file.len() + 4;
    let section = &all[start..];
    let section = &section[..section.find("\n== ").map_or(section.len(), |i| i + 1)];
    let error = section.lines().next().unwrap().strip_prefix("ERROR:  ").unwrap().to_string();
    let context = section.find("CONTEXT:  ").map(|i| section[i + 10..].strip_suffix('\n').unwrap().to_string());
    Expected { error, context }
}

fn read_until_error(file: &str, format: CopyFormat, header: bool) -> PgError {
    let input = fixture(&format!("bad/{file}"));
    let mut reader = CopyReader::new(&input[..], options(format, header), "types", &columns());
    loop {
        match reader.next_row() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("{file}: no error"),
            Err(e) => return e,
        }
    }
}

#[test]
fn malformed_files_fail_as_postgres_does() {
    for (file, format, header, code) in [
        ("bad_signature.bin", CopyFormat::Binary, false, sqlstate::BAD_COPY_FILE_FORMAT),
        ("bad_utf8.text", CopyFormat::Text, false, sqlstate::CHARACTER_NOT_IN_REPERTOIRE),
        ("missing_columns.text", CopyFormat::Text, false, sqlstate::BAD_COPY_FILE_FORMAT),
        ("too_many_columns.text", CopyFormat::Text, false, sqlstate::BAD_COPY_FILE_FORMAT),
        ("truncated.bin", CopyFormat::Binary, false, sqlstate::BAD_COPY_FILE_FORMAT),
        ("unterminated_quote.csv", CopyFormat::Csv, true, sqlstate::BAD_COPY_FILE_FORMAT),
    ] {
        let err = read_until_error(file, format, header);
        let want = expected(file);
        assert_eq!(err.code, code, "{file}");
        assert_eq!(err.message, want.error, "{file}");
        assert_eq!(err.context.as_deref(), want.context.as_deref(), "{file}");
    }
}

#[test]
fn bad_values_get_postgres_context_lines() {
    let cols = columns();
    for file in [
        "bad_bool.text",
        "bad_date.text",
        "bad_escape_bytea.text",
        "bad_int.text",
        "smallint_range.text",
        "varchar_too_long.text",
        "null_in_not_null.text",
    ] {
        let want = expected(file).context.unwrap();
        let line: u64 = want.split("line ").nth(1).unwrap().split([',', ':']).next().unwrap().parse().unwrap();
        let input = fixture(&format!("bad/{file}"));
        let mut reader = CopyReader::new(&input[..], options(CopyFormat::Text, false), "types", &cols);
        while reader.next_row().unwrap().is_some_and(|row| row.line_no() != line) {}
        let got = match want.split(", column ").nth(1) {
            Some(rest) => {
                let name = rest.split(':').next().unwrap();
                reader.column_context(cols.iter().position(|c| c == name).unwrap())
            }
            None => reader.line_context(),
        };
        assert_eq!(got, want, "{file}");
        assert!(reader.next_row().unwrap().is_none(), "{file}");
    }
}

/// xorshift64*: deterministic randomness without dependencies.
use crate::rng::Rng;

/// Hands out at most `max` bytes per read, so that lines, characters and tuples are cut
/// at every possible place.
struct Chunked<'a> {
    data: &'a [u8],
    max: usize,
}

impl std::io::Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.max.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Pieces that stress quoting and escaping.
const PIECES: &[&str] = &[
    "a",
    "Z",
    "7",
    " ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\\",
    "\\N",
    "\\.",
    ".",
    "N",
    "\"",
    "\"\"",
    "'",
    ",",
    "|",
    ";",
    "é",
    "日本語",
    "🚀",
    "\u{1}",
    "\u{8}",
    "\u{b}",
    "\u{c}",
    "\u{7f}",
    "NULL",
    "x\\",
];

fn random_value(rng: &mut Rng, binary: bool) -> Option<Vec<u8>> {
    if rng.below(8) == 0 {
        return None;
    }
    let len = rng.below(10);
    if binary {
        return Some((0..len * 3).map(|_| rng.next_u64() as u8).collect());
    }
    Some((0..len).flat_map(|_| PIECES[rng.below(PIECES.len() as u64) as usize].bytes()).collect())
}

fn random_options(rng: &mut Rng, format: CopyFormat) -> CopyOptions {
    let mut opts = options(format, rng.below(2) == 0 && format != CopyFormat::Binary);
    if rng.below(2) == 0 {
        match format {
            CopyFormat::Text => opts.delimiter = b'|',
            CopyFormat::Csv => {
                (opts.delimiter, opts.quote, opts.escape) = (b';', b'\'', b'\\');
                opts.null = "NULL".to_string();
            }
            CopyFormat::Binary => {}
        }
    }
    opts
}

fn round_trip_once(rng: &mut Rng, format: CopyFormat) {
    let opts = random_options(rng, format);
    let ncols = 1 + rng.below(5) as usize;
    let cols: Vec<String> = (0..ncols).map(|i| format!("c{i}")).collect();
    let rows: Vec<Vec<Option<Vec<u8>>>> =
        (0..rng.below(12) as usize).map(|_| (0..ncols).map(|_| random_value(rng, format == CopyFormat::Binary)).collect()).collect();
    let mut writer = CopyWriter::new(Vec::new(), opts.clone());
    writer.begin(&cols).unwrap();
    for row in &rows {
        let fields: Vec<Option<&[u8]>> = row.iter().map(|v| v.as_deref()).collect();
        writer.write_row(&fields).unwrap();
    }
    let data = writer.finish().unwrap();
    let max = 1 + rng.below(9) as usize;
    let mut reader = CopyReader::new(Chunked { data: &data, max }, opts.clone(), "t", &cols);
    for (i, want) in rows.iter().enumerate() {
        let row = reader.next_row().unwrap_or_else(|e| panic!("{opts:?} row {i}: {e}\n{data:?}"));
        let got: Vec<Option<Vec<u8>>> = row.unwrap().iter().map(|f| f.map(|f| f.as_bytes().to_vec())).collect();
        assert_eq!(&got, want, "{opts:?} row {i}: {:?}", String::from_utf8_lossy(&data));
    }
    assert!(reader.next_row().unwrap().is_none(), "{opts:?}");
}

#[test]
fn random_rows_round_trip_in_all_formats() {
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        for format in [CopyFormat::Text, CopyFormat::Csv, CopyFormat::Binary] {
            round_trip_once(&mut rng, format);
        }
    }
}

/// About `target` bytes: the rows of a PostgreSQL file repeated, inside that file's own
/// header and trailer (`head` and `tail` bytes).
fn repeat_rows(input: &[u8], head: usize, tail: usize, target: usize) -> Vec<u8> {
    let body = &input[head..input.len() - tail];
    let mut data = input[..head].to_vec();
    while data.len() < target {
        data.extend_from_slice(body);
    }
    data.extend_from_slice(&input[input.len() - tail..]);
    data
}

/// Seconds to read all of `data`, touching every field.
fn time_read(data: &[u8], opts: &CopyOptions, cols: &[String]) -> f64 {
    let t = Instant::now();
    let mut reader = CopyReader::new(data, opts.clone(), "types", cols);
    let mut bytes = 0;
    while let Some(row) = reader.next_row().unwrap() {
        bytes += row.iter().map(|f| f.map_or(0, |f: Field| f.as_bytes().len())).sum::<usize>();
    }
    assert!(bytes > 0);
    t.elapsed().as_secs_f64()
}

/// Seconds to write the rows of `data` (parsed beforehand) until `target` bytes are out.
fn time_write(data: &[u8], opts: &CopyOptions, cols: &[String], target: usize) -> f64 {
    let mut reader = CopyReader::new(data, opts.clone(), "types", cols);
    let mut rows: Vec<Vec<Option<Vec<u8>>>> = Vec::new();
    while let Some(row) = reader.next_row().unwrap() {
        rows.push(row.iter().map(|f| f.map(|f| f.as_bytes().to_vec())).collect());
    }
    let fields: Vec<Vec<Option<&[u8]>>> = rows.iter().map(|r| r.iter().map(|v| v.as_deref()).collect()).collect();
    let t = Instant::now();
    let mut writer = CopyWriter::new(std::io::sink(), opts.clone());
    writer.begin(cols).unwrap();
    for _ in 0..target.div_ceil(data.len()) {
        for row in &fields {
            writer.write_row(row).unwrap();
        }
    }
    writer.finish().unwrap();
    t.elapsed().as_secs_f64()
}

#[test]
#[ignore = "throughput report; run with --release --ignored --nocapture"]
fn throughput() {
    const TARGET: usize = 100 << 20;
    let cols = columns();
    let csv = fixture("types.csv");
    let csv_header = csv.iter().position(|&b| b == b'\n').unwrap() + 1;
    for (name, format, head, tail) in
        [("types.text", CopyFormat::Text, 0, 0), ("types.csv", CopyFormat::Csv, csv_header, 0), ("types.bin", CopyFormat::Binary, 19, 2)]
    {
        let input = fixture(name);
        let data = repeat_rows(&input, head, tail, TARGET);
        let opts = options(format, format == CopyFormat::Csv);
        let mb = data.len() as f64 / 1e6;
        // Best of three: the machine may be shared.
        let best = |f: &dyn Fn() -> f64| (0..3).map(|_| mb / f()).fold(0.0, f64::max);
        let read = best(&|| time_read(&data, &opts, &cols));
        let write = best(&|| time_write(&input, &opts, &cols, data.len()));
        println!("{name}: {mb:.0} MB: read {read:.0} MB/s, write {write:.0} MB/s");
    }
}

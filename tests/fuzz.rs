//! Fuzzing with a fixed budget (proptest as the engine): arbitrary and mutated bytes fed to the
//! WAL record decoder, the control file reader, page verification, the server's wire message
//! decoder and the COPY FROM parsers (text, csv, binary) must give a clear error or a value,
//! never a panic or a hang; a COPY that fails leaves no row behind. `HEAPSTORE_FUZZ_CASES` sets the cases per target
//! (default 2,000; CI runs the default).

mod common;

use heapstore::server::wire::Wire;
use heapstore::storage::page;
use heapstore::wal::{record, RecordBuilder};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("HEAPSTORE_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000)
}

/// A valid record to mutate: a main part and blocks with data and with an image.
fn valid_record(seed: u8) -> Vec<u8> {
    let mut b = RecordBuilder::new();
    b.begin(3, 0x10, 42);
    b.set_main(&[seed; 20]);
    let mut pg = vec![0u8; 8192];
    page::init(&mut pg, 0);
    b.add_block(16384, 0, 7, None, &[seed; 100], false);
    b.add_block(16385, 0, 9, Some((&pg, page::lower(&pg) as u16, (page::upper(&pg) - page::lower(&pg)) as u16)), &[], true);
    b.finish().to_vec()
}

/// Sets the CRC field so that the structure behind it gets parsed.
fn fix_crc(rec: &mut [u8]) {
    if rec.len() >= 8 {
        let len = (u32::from_le_bytes(rec[0..4].try_into().unwrap()) as usize).min(rec.len());
        if len >= 24 {
            let c = record::record_crc(&rec[..len]);
            rec[4..8].copy_from_slice(&c.to_le_bytes());
        }
    }
}

/// Touches everything a decoded record offers, as recovery would.
fn consume(rec: &[u8]) {
    if let Ok(d) = record::decode(rec) {
        let _ = (d.rmgr(), d.info(), d.xid(), d.lsn(), d.end_lsn(), d.main_data().len());
        for b in d.blocks() {
            let _ = b.data().len();
            if let Some(img) = b.image() {
                if img.page_len <= 65536 {
                    let _ = img.to_page();
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn wal_decoder_takes_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600), fix in any::<bool>()) {
        let mut b = bytes;
        if fix {
            fix_crc(&mut b);
        }
        consume(&b);
    }

    #[test]
    fn wal_decoder_takes_mutated_records(seed in any::<u8>(), flips in proptest::collection::vec((any::<u16>(), any::<u8>()), 1..8), cut in any::<u16>()) {
        let mut rec = valid_record(seed);
        for (at, x) in flips {
            let i = at as usize % rec.len();
            rec[i] ^= x | 1;
        }
        rec.truncate((cut as usize % (rec.len() + 1)).max(1));
        fix_crc(&mut rec);
        consume(&rec);
    }

    #[test]
    fn control_file_reader_takes_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = heapstore::db::parse_control(&bytes);
    }

    #[test]
    fn control_file_reader_takes_mutated_files(flips in proptest::collection::vec((any::<u16>(), any::<u8>()), 1..6)) {
        let good = br#"{"version":1,"system_identifier":7,"block_size":8192,"state":"in production","next_xid":100,"checkpoint_lsn":16777296,"redo_lsn":16777216,"wal_segment_size":16777216}"#;
        let mut b = good.to_vec();
        for (at, x) in flips {
            let i = at as usize % b.len();
            b[i] ^= x;
        }
        if let Ok(c) = heapstore::db::parse_control(&b) {
            prop_assert!(c.block_size.is_power_of_two());
        }
    }

    #[test]
    fn page_verification_takes_arbitrary_pages(bytes in proptest::collection::vec(any::<u8>(), 8192..=8192), block in any::<u32>()) {
        let _ = page::verify(&bytes, block, "fuzz");
    }

    #[test]
    fn page_verification_takes_mutated_pages(flips in proptest::collection::vec((0usize..8192, any::<u8>()), 1..6)) {
        let mut pg = vec![0u8; 8192];
        page::init(&mut pg, 0);
        page::add_item(&mut pg, &[1u8; 300]).unwrap();
        page::set_checksum(&mut pg, 3);
        prop_assert!(page::verify(&pg, 3, "fuzz").is_ok());
        let flips: std::collections::BTreeMap<usize, u8> = flips.into_iter().collect();
        for (at, x) in flips {
            pg[at] ^= x | 1;
        }
        prop_assert!(page::verify(&pg, 3, "fuzz").is_err(), "a changed page fails verification");
    }

    #[test]
    fn wire_decoder_takes_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400), startup in any::<bool>()) {
        decode_all(bytes, startup);
    }

    #[test]
    fn wire_decoder_takes_mutated_messages(flips in proptest::collection::vec((any::<u16>(), any::<u8>()), 1..6), cut in any::<u16>()) {
        let mut b = valid_messages();
        let n = b.len();
        for (at, x) in flips {
            b[at as usize % n] ^= x | 1;
        }
        b.truncate((cut as usize % (n + 1)).max(1));
        decode_all(b, false);
    }

    #[test]
    fn copy_parsers_take_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300), format in 0usize..3) {
        copy_case(&bytes, format);
    }

    #[test]
    fn copy_parsers_take_mutated_input(flips in proptest::collection::vec((any::<u16>(), any::<u8>()), 1..5), cut in any::<u16>(), format in 0usize..3) {
        let mut b = valid_copy_input(format);
        let n = b.len();
        for (at, x) in flips {
            b[at as usize % n] ^= x | 1;
        }
        b.truncate(cut as usize % (n + 1));
        copy_case(&b, format);
    }
}

/// A byte stream to decode from (writes are discarded).
struct Input(std::io::Cursor<Vec<u8>>);

impl std::io::Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl std::io::Write for Input {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Decodes messages until the first error (end of input included): never a panic.
fn decode_all(bytes: Vec<u8>, startup: bool) {
    let mut w = Wire::new(Input(std::io::Cursor::new(bytes)));
    if startup {
        let _ = w.read_startup();
    }
    for _ in 0..64 {
        if w.read_message().is_err() {
            break;
        }
    }
}

/// Parse, Bind (a text and a binary parameter), Describe, Execute, Sync, Query, Close: frames to
/// mutate.
fn valid_messages() -> Vec<u8> {
    fn msg(ty: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![ty];
        m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        m.extend_from_slice(body);
        m
    }
    let mut out = msg(b'P', b"s1\0SELECT $1, $2\0\x00\x02\x00\x00\x00\x17");
    out.extend(msg(b'B', b"\0s1\0\x00\x02\x00\x00\x00\x01\x00\x02\x00\x00\x00\x01x\x00\x00\x00\x04\x00\x00\x00\x07\x00\x00"));
    out.extend(msg(b'D', b"Ps1\0"));
    out.extend(msg(b'E', b"\0\x00\x00\x00\x00"));
    out.extend(msg(b'S', b""));
    out.extend(msg(b'Q', b"SELECT 1\0"));
    out.extend(msg(b'C', b"Ss1\0"));
    out
}

const COPY_FORMATS: [&str; 3] = ["text", "csv", "binary"];

/// Valid COPY input for the fuzz table in each format (made by COPY TO).
fn valid_copy_input(format: usize) -> Vec<u8> {
    FUZZ_DB.with(|cell| {
        let mut g = cell.borrow_mut();
        let (s, _, _) = &mut *g;
        common::copy_out(s, &format!("COPY fz_src TO STDOUT WITH (FORMAT {})", COPY_FORMATS[format]))
    })
}

thread_local! {
    /// One database per test thread (dropped session first, directory last): `fz` receives the fuzzed COPYs, `fz_src` holds valid rows.
    static FUZZ_DB: std::cell::RefCell<(heapstore::Session, heapstore::Database, tempfile::TempDir)> = {
        let (t, _dir, db) = common::new_db(&[]);
        let mut s = db.session();
        s.execute("CREATE TABLE fz (a integer NOT NULL, b text, c bytea, d date, e double precision, f boolean)").unwrap();
        s.execute("CREATE TABLE fz_src (a integer NOT NULL, b text, c bytea, d date, e double precision, f boolean)").unwrap();
        s.execute("INSERT INTO fz_src VALUES (1, 'x,\"y\"', '\\x00ff', '2024-02-29', 1.5, true), (2, NULL, NULL, NULL, NULL, NULL), (-3, E'tab\\there', '\\x', '1999-12-31', -0, false)").unwrap();
        std::cell::RefCell::new((s, db, t))
    };
}

/// Runs one COPY FROM of `bytes`: it either loads rows or fails with a SQLSTATE, and a failed
/// COPY leaves the table as it was.
fn copy_case(bytes: &[u8], format: usize) {
    FUZZ_DB.with(|cell| {
        let mut g = cell.borrow_mut();
        let (s, _, _) = &mut *g;
        let before = common::count(s, "fz");
        let r = common::copy_in(s, &format!("COPY fz FROM STDIN WITH (FORMAT {})", COPY_FORMATS[format]), bytes);
        match r {
            Ok(_) => {}
            Err(e) => {
                assert_eq!(e.code.len(), 5, "a SQLSTATE: {e}");
                assert!(!e.panic, "{e}");
                assert_eq!(common::count(s, "fz"), before, "a failed COPY left rows: {e}");
            }
        }
    });
}

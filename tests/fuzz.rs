//! Fuzzing with a fixed budget (proptest as the engine): arbitrary and mutated bytes fed to the
//! WAL record decoder, the control file reader and page verification must give a clear error
//! or a value, never a panic or a hang. `HEAPSTORE_FUZZ_CASES` sets the cases per target
//! (default 2,000; CI runs the default).

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
}

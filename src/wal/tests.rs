//! Whole-WAL tests: concurrency, group commit, end of WAL, faults, single-lock equivalence.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use super::*;
use crate::error::sqlstate;

const MB: u64 = 1 << 20;

fn settings(dir: &Path, seg: u64, ring: usize) -> WalSettings {
    WalSettings { segment_size: seg, buffers_bytes: ring, ..WalSettings::new(dir) }
}

/// splitmix64: deterministic test randomness.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A size from 20 bytes to 40 kB, log-uniform (many small records, some large ones).
fn record_size(r: u64) -> usize {
    let f = (r % 10_000) as f64 / 10_000.0;
    (20.0 * (2000.0f64).powf(f)) as usize
}

/// Main data that encodes (thread, seq) and a filler derived from them, `size` bytes long.
fn payload(thread: u32, seq: u32, size: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(size.max(8));
    v.extend_from_slice(&thread.to_le_bytes());
    v.extend_from_slice(&seq.to_le_bytes());
    let seed = mix(((thread as u64) << 32) | seq as u64);
    while v.len() < size {
        v.push(mix(seed ^ v.len() as u64) as u8);
    }
    v
}

fn check_payload(main: &[u8]) -> (u32, u32) {
    let thread = u32::from_le_bytes(main[0..4].try_into().unwrap());
    let seq = u32::from_le_bytes(main[4..8].try_into().unwrap());
    assert_eq!(main, &payload(thread, seq, main.len())[..], "payload of ({thread}, {seq}) corrupted");
    (thread, seq)
}

fn insert_payload(wal: &Wal, b: &mut RecordBuilder, thread: u32, seq: u32, size: usize) -> Result<(Lsn, Lsn)> {
    b.begin(1, 0, seq as u64).set_main(&payload(thread, seq, size));
    wal.insert(b)
}

/// Every record from `start` to the end: (position, bytes); and the end position.
fn read_all(dir: &Path, seg: u64, start: Lsn) -> (Vec<(Lsn, Vec<u8>)>, Lsn) {
    let mut r = WalReader::new(dir, seg, start).unwrap();
    let mut v = Vec::new();
    while let Some((lsn, bytes)) = r.next().unwrap() {
        v.push((lsn, bytes.to_vec()));
    }
    (v, r.end_lsn())
}

/// Runs `threads` sessions each inserting `per_thread` payload records (random sizes), with a
/// flush every `flush_every` records, then flushes and checks that the reader returns every
/// record exactly once, in LSN order, matching the positions `insert` returned.
fn concurrent_run(s: WalSettings, threads: u32, per_thread: u32, flush_every: u32) -> Wal {
    let dir = s.dir.clone();
    let seg = s.segment_size;
    let start = s.initial_lsn();
    let wal = Arc::new(Wal::open(s, start).unwrap());
    let barrier = Arc::new(Barrier::new(threads as usize));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let wal = Arc::clone(&wal);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let mut b = RecordBuilder::new();
                let mut got = Vec::with_capacity(per_thread as usize);
                for seq in 0..per_thread {
                    let size = record_size(mix(((t as u64) << 32) | seq as u64)).max(8);
                    let (s, e) = insert_payload(&wal, &mut b, t, seq, size).unwrap();
                    got.push((s, e));
                    if flush_every > 0 && seq % flush_every == flush_every - 1 {
                        wal.flush(e).unwrap();
                        assert!(wal.flushed_lsn() >= e);
                    }
                }
                got
            })
        })
        .collect();
    let positions: Vec<Vec<(Lsn, Lsn)>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let end = wal.insert_lsn();
    wal.flush(end).unwrap();
    assert_eq!(wal.flushed_lsn(), end);

    let (recs, read_end) = read_all(&dir, seg, start);
    assert_eq!(read_end, end, "the reader stops exactly at the end of inserted WAL");
    assert_eq!(recs.len(), (threads * per_thread) as usize);
    let mut seen: HashMap<(u32, u32), Lsn> = HashMap::new();
    let mut prev_end = start;
    for (lsn, bytes) in &recs {
        assert_eq!(*lsn, prev_end, "records are contiguous");
        let d = decode(bytes).unwrap();
        assert_eq!(d.lsn(), *lsn);
        let key = check_payload(d.main_data());
        assert!(seen.insert(key, *lsn).is_none(), "record {key:?} read twice");
        prev_end = d.end_lsn();
    }
    for (t, v) in positions.iter().enumerate() {
        for (seq, (s, e)) in v.iter().enumerate() {
            assert_eq!(seen.get(&(t as u32, seq as u32)), Some(s), "record ({t}, {seq}) missing or moved");
            assert!(e > s);
        }
    }
    Arc::try_unwrap(wal).ok().expect("no other owners")
}

#[test]
fn sixteen_threads_wrap_the_ring_and_cross_segments() {
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let wal = concurrent_run(settings(dir.path(), MB, 256 << 10), 16, 2000, 97);
    let st = wal.stats();
    assert_eq!(st.records, 32_000);
    assert!(st.bytes > 32 * MB, "enough data to wrap a 256 kB ring many times: {} bytes", st.bytes);
    assert!(st.segments_created > 32);
    eprintln!("16x2000: {:?}, {st:?}", t.elapsed());
}

#[test]
fn tiny_ring_many_threads_stress() {
    // A 32 kB ring with records up to 40 kB: most inserts wait for room, many are copied in
    // pieces, and flushers, writers and inserters constantly meet.
    let dir = tempfile::tempdir().unwrap();
    let s = WalSettings { insert_locks: 3, ..settings(dir.path(), MB, 32 << 10) };
    concurrent_run(s, 12, 300, 7);
}

#[test]
fn single_lock_insert_gives_the_same_records() {
    let dir = tempfile::tempdir().unwrap();
    let s = WalSettings { single_lock_insert: true, ..settings(dir.path(), MB, 256 << 10) };
    concurrent_run(s, 8, 500, 50);

    // One session: the two designs produce byte-identical WAL.
    let mut logs = Vec::new();
    for single in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let s = WalSettings { single_lock_insert: single, ..settings(dir.path(), MB, 64 << 10) };
        let start = s.initial_lsn();
        let wal = Wal::open(s, start).unwrap();
        let mut b = RecordBuilder::new();
        for seq in 0..600 {
            insert_payload(&wal, &mut b, 0, seq, record_size(mix(seq as u64))).unwrap();
        }
        wal.flush(wal.insert_lsn()).unwrap();
        logs.push(read_all(dir.path(), MB, start));
    }
    assert_eq!(logs[0].0.len(), 600);
    assert_eq!(logs[0], logs[1]);
}

#[test]
fn records_larger_than_the_ring() {
    let dir = tempfile::tempdir().unwrap();
    let s = settings(dir.path(), MB, 32 << 10);
    let start = s.initial_lsn();
    let wal = Arc::new(Wal::open(s, start).unwrap());
    let handles: Vec<_> = (0..4u32)
        .map(|t| {
            let wal = Arc::clone(&wal);
            std::thread::spawn(move || {
                let mut b = RecordBuilder::new();
                for seq in 0..30 {
                    let size = if seq % 3 == 0 { 100_000 } else { 3_000 };
                    insert_payload(&wal, &mut b, t, seq, size).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    wal.flush(wal.insert_lsn()).unwrap();
    let (recs, end) = read_all(dir.path(), MB, start);
    assert_eq!(recs.len(), 120);
    assert_eq!(end, wal.insert_lsn());
    for (_, r) in &recs {
        check_payload(decode(r).unwrap().main_data());
    }
}

#[test]
fn group_commit_serves_many_flushes_with_few_fsyncs() {
    let dir = tempfile::tempdir().unwrap();
    let s = settings(dir.path(), MB, 1 << 20);
    let wal = Arc::new(Wal::open(s.clone(), s.initial_lsn()).unwrap());
    let threads = 16;
    let commits = 40;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads as u32)
        .map(|t| {
            let wal = Arc::clone(&wal);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let mut b = RecordBuilder::new();
                for seq in 0..commits {
                    let (_, end) = insert_payload(&wal, &mut b, t, seq, 100).unwrap();
                    wal.flush(end).unwrap();
                    assert!(wal.flushed_lsn() >= end);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let st = wal.stats();
    let flushes = (threads as u64) * commits as u64;
    eprintln!(
        "group commit: {flushes} flushes, {} fsyncs ({} us each), {} hits, {} already done",
        st.fsyncs,
        st.fsync_ns / st.fsyncs.max(1) / 1000,
        st.group_commit_hits,
        st.flushes_already_done
    );
    assert_eq!(st.flush_calls, flushes);
    assert!(st.fsyncs * 3 < flushes, "{} fsyncs for {flushes} flushes", st.fsyncs);
    assert_eq!(st.fsyncs + st.group_commit_hits + st.flushes_already_done, flushes);
    let (recs, _) = read_all(dir.path(), MB, s.initial_lsn());
    assert_eq!(recs.len() as u64, flushes);
}

/// Inserts `n` payload records for `thread` and flushes; returns their (start, end)s.
fn fill(wal: &Wal, thread: u32, n: u32, size: usize) -> Vec<(Lsn, Lsn)> {
    let mut b = RecordBuilder::new();
    let v: Vec<_> = (0..n).map(|seq| insert_payload(wal, &mut b, thread, seq, size).unwrap()).collect();
    wal.flush(wal.insert_lsn()).unwrap();
    v
}

fn keys(recs: &[(Lsn, Vec<u8>)]) -> Vec<(u32, u32)> {
    recs.iter().map(|(_, r)| check_payload(decode(r).unwrap().main_data())).collect()
}

fn segment_path(dir: &Path, lsn: Lsn, seg: u64) -> std::path::PathBuf {
    dir.join(WAL_DIR).join(segment_name(lsn / seg, seg))
}

/// After the end was found at `end`: reopen there, insert more, and check old + new.
fn reopen_and_continue(dir: &Path, seg: u64, start: Lsn, end: Lsn, old: usize) {
    let s = settings(dir, seg, 256 << 10);
    let wal = Wal::open(s, end).unwrap();
    assert_eq!(wal.insert_lsn(), end);
    let new = fill(&wal, 9, 50, 700);
    assert_eq!(new[0].0, end);
    let (recs, read_end) = read_all(dir, seg, start);
    assert_eq!(read_end, wal.insert_lsn());
    assert_eq!(recs.len(), old + 50);
    let k = keys(&recs);
    assert_eq!(&k[old..], &(0..50).map(|s| (9, s)).collect::<Vec<_>>()[..]);
}

#[test]
fn garbage_after_the_end_is_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let s = settings(dir.path(), MB, 256 << 10);
    let start = s.initial_lsn();
    let wal = Wal::open(s, start).unwrap();
    fill(&wal, 1, 100, 300);
    let end = wal.insert_lsn();
    drop(wal);
    // Garbage where the next record would be.
    let f = std::fs::OpenOptions::new().write(true).open(segment_path(dir.path(), end, MB)).unwrap();
    let garbage: Vec<u8> = (0..4096).map(|i| mix(i) as u8).collect();
    std::os::unix::fs::FileExt::write_all_at(&f, &garbage, end % MB).unwrap();
    // Garbage with a plausible length and the right lsn field, but a bad CRC.
    let mut fake = garbage[..64].to_vec();
    fake[0..4].copy_from_slice(&64u32.to_le_bytes());
    fake[8..16].copy_from_slice(&end.to_le_bytes());
    std::os::unix::fs::FileExt::write_all_at(&f, &fake, end % MB).unwrap();
    drop(f);
    let mut r = WalReader::new(dir.path(), MB, start).unwrap();
    let mut n = 0;
    while r.next().unwrap().is_some() {
        n += 1;
    }
    assert_eq!((n, r.end_lsn()), (100, end));
    assert!(r.end_reason().unwrap().contains("incorrect checksum"), "{:?}", r.end_reason());
    reopen_and_continue(dir.path(), MB, start, end, 100);
}

#[test]
fn torn_write_is_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::new();
    let s = WalSettings { faults: Some(Arc::clone(&faults)), ..settings(dir.path(), MB, 256 << 10) };
    let start = s.initial_lsn();
    let wal = Wal::open(s, start).unwrap();
    fill(&wal, 1, 100, 300);
    let before = wal.insert_lsn();
    // A record that spans a segment boundary, torn in the middle.
    let mut b = RecordBuilder::new();
    let pad = MB - before % MB - 1000;
    insert_payload(&wal, &mut b, 2, 0, pad as usize).unwrap();
    insert_payload(&wal, &mut b, 2, 1, 8000).unwrap();
    faults.tear_write(1);
    let e = wal.flush(wal.insert_lsn()).unwrap_err();
    assert!(e.message.contains("simulated crash"), "{e}");
    // The WAL is now dead, as a crashed process would be.
    assert!(wal.insert(&mut b).unwrap_err().message.contains("unusable after an earlier write failure"));
    drop(wal);
    let (recs, end) = read_all(dir.path(), MB, start);
    assert!(recs.len() == 100 || recs.len() == 101, "{}", recs.len());
    assert!(end <= before + align_len_of(pad));
    reopen_and_continue(dir.path(), MB, start, end, recs.len());
}

fn align_len_of(main: u64) -> u64 {
    record::align_len(record::HEADER_LEN as u64 + 4 + main)
}

#[test]
fn truncated_last_record_is_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let s = settings(dir.path(), MB, 256 << 10);
    let start = s.initial_lsn();
    let wal = Wal::open(s, start).unwrap();
    let recs = fill(&wal, 1, 100, 500);
    drop(wal);
    let (last_start, last_end) = recs[99];
    let f = std::fs::OpenOptions::new().write(true).open(segment_path(dir.path(), last_start, MB)).unwrap();
    f.set_len((last_start + last_end) / 2 % MB).unwrap();
    drop(f);
    let (got, end) = read_all(dir.path(), MB, start);
    assert_eq!((got.len(), end), (99, last_start));
    reopen_and_continue(dir.path(), MB, start, end, 99);
}

#[test]
fn recycled_segments_read_as_the_end_and_are_reused() {
    let dir = tempfile::tempdir().unwrap();
    let s = settings(dir.path(), MB, 256 << 10);
    let start = s.initial_lsn();
    let wal = Wal::open(s, start).unwrap();
    // About 3.5 segments of WAL.
    let first = fill(&wal, 1, 3500, 1000);
    let end = wal.insert_lsn();
    assert!(end / MB >= 4);
    // Keep segments from the one holding record 2000 on; recycle the older ones.
    let keep_from = first[2000].0;
    let n = wal.recycle_before(keep_from).unwrap();
    assert_eq!(n as u64, keep_from / MB - start / MB);
    assert_eq!(wal.stats().segments_recycled, n as u64);
    // The recycled segments are now the files after the current one, full of old records.
    let next_seg = segment_path(dir.path(), (end / MB + 1) * MB, MB);
    assert!(next_seg.exists());
    // Pretend a crash made the reader hit the recycled file: fill up to the segment's end first.
    let (recs, read_end) = read_all(dir.path(), MB, keep_from);
    assert_eq!(read_end, end);
    assert_eq!(recs.len(), 1500);
    // Insert on into the recycled files (no new segment created) and read old + new.
    let created = wal.stats().segments_created;
    let more = fill(&wal, 2, 1500, 1000);
    assert!(more.last().unwrap().1 / MB > end / MB, "crossed into a recycled segment");
    assert_eq!(wal.stats().segments_created, created, "recycled files were reused");
    let (recs, read_end) = read_all(dir.path(), MB, keep_from);
    assert_eq!(read_end, wal.insert_lsn());
    assert_eq!(recs.len(), 3000);
    // The end lies inside a recycled segment whose old records follow: they read as the end.
    let seg_end_has_old_data = {
        let bytes = std::fs::read(segment_path(dir.path(), read_end, MB)).unwrap();
        bytes[(read_end % MB) as usize + 64..].iter().any(|&b| b != 0)
    };
    assert!(seg_end_has_old_data, "the test should end inside old contents");
    drop(wal);
    reopen_and_continue(dir.path(), MB, keep_from, read_end, 3000);
}

#[test]
fn reopening_earlier_discards_everything_after() {
    // Records of one size, so that new records end exactly where old ones began: without the
    // start-up cleanup (invariant 9) the old records, whose lsn fields match their positions,
    // would read as valid after the new ones.
    let dir = tempfile::tempdir().unwrap();
    let s = settings(dir.path(), MB, 256 << 10);
    let start = s.initial_lsn();
    let wal = Wal::open(s.clone(), start).unwrap();
    let old = fill(&wal, 1, 3000, 1000);
    assert!(old.last().unwrap().1 / MB >= 3, "several segments");
    drop(wal);
    let cut = old[500].0;
    let wal = Wal::open(s, cut).unwrap();
    assert!(!segment_path(dir.path(), (cut / MB + 1) * MB, MB).exists(), "later segments removed");
    let new = fill(&wal, 2, 10, 1000);
    assert_eq!(new.last().unwrap().1, old[510].0, "new records end on an old boundary");
    let (recs, end) = read_all(dir.path(), MB, start);
    assert_eq!(end, old[510].0);
    let mut want: Vec<_> = (0..500).map(|s| (1, s)).collect();
    want.extend((0..10).map(|s| (2, s)));
    assert_eq!(keys(&recs), want);
}

#[test]
fn fsync_failure_poisons_for_good() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::new();
    let s = WalSettings { faults: Some(Arc::clone(&faults)), ..settings(dir.path(), MB, 256 << 10) };
    let wal = Wal::open(s.clone(), s.initial_lsn()).unwrap();
    fill(&wal, 1, 10, 100);
    let mut b = RecordBuilder::new();
    let (_, end) = insert_payload(&wal, &mut b, 1, 10, 100).unwrap();
    faults.fail_next_fsync();
    let e = wal.flush(end).unwrap_err();
    assert_eq!(e.code, sqlstate::IO_ERROR);
    assert!(e.message.starts_with("could not fsync file \"pg_wal/000000010000000000000001\": "), "{}", e.message);
    let first = e.message.clone();
    // The next fsync would succeed, but nothing may pretend the lost data is durable.
    assert!(wal.flushed_lsn() < end);
    for e in [
        wal.flush(end).unwrap_err(),
        insert_payload(&wal, &mut b, 1, 11, 100).unwrap_err(),
        wal.write_upto(end).unwrap_err(),
        wal.flush(0).unwrap_err(),
    ] {
        assert_eq!(e.code, sqlstate::IO_ERROR);
        assert_eq!(e.message, format!("write-ahead log is unusable after an earlier fsync failure: {first}"));
        assert!(e.hint.is_some());
    }
}

#[test]
fn enospc_fails_cleanly_and_work_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::new();
    let s = WalSettings { faults: Some(Arc::clone(&faults)), ..settings(dir.path(), MB, 512 << 10) };
    let start = s.initial_lsn();
    let wal = Wal::open(s, start).unwrap();
    let mut b = RecordBuilder::new();
    // Fill most of segment 1 and make it durable.
    let mut seq = 0;
    while wal.insert_lsn() < start + MB - 100_000 {
        insert_payload(&wal, &mut b, 1, seq, 4000).unwrap();
        seq += 1;
    }
    wal.flush(wal.insert_lsn()).unwrap();
    faults.set_disk_full(true);
    // Cross into segment 2, which cannot be created.
    while wal.insert_lsn() < start + MB + 100_000 {
        insert_payload(&wal, &mut b, 1, seq, 4000).unwrap();
        seq += 1;
    }
    let e = wal.flush(wal.insert_lsn()).unwrap_err();
    assert_eq!(e.code, sqlstate::DISK_FULL, "{e}");
    assert!(e.message.starts_with("could not write to file \"pg_wal/xlogtemp."), "{}", e.message);
    assert!(e.message.contains("No space left on device"), "{}", e.message);
    assert_eq!(wal.written_lsn(), start + MB, "segment 1 was written up to its end");
    assert!(wal.flushed_lsn() < start + MB);
    // Again: still full, still a clean error.
    assert_eq!(wal.flush(wal.insert_lsn()).unwrap_err().code, sqlstate::DISK_FULL);
    // Fill the ring: the insert that finds no room fails before reserving anything.
    let mut failed = None;
    for _ in 0..200 {
        let before = wal.insert_lsn();
        match insert_payload(&wal, &mut b, 1, seq, 4000) {
            Ok(_) => seq += 1,
            Err(e) => {
                assert_eq!(wal.insert_lsn(), before, "a failed insert reserves nothing");
                failed = Some(e);
                break;
            }
        }
    }
    assert_eq!(failed.expect("the ring filled up").code, sqlstate::DISK_FULL);
    assert!(!dir.path().join(WAL_DIR).read_dir().unwrap().any(|e| e.unwrap().file_name().to_string_lossy().starts_with("xlogtemp")));
    // Space is back: everything works and everything is there.
    faults.set_disk_full(false);
    wal.flush(wal.insert_lsn()).unwrap();
    for _ in 0..50 {
        insert_payload(&wal, &mut b, 1, seq, 4000).unwrap();
        seq += 1;
    }
    wal.flush(wal.insert_lsn()).unwrap();
    let (recs, end) = read_all(dir.path(), MB, start);
    assert_eq!(end, wal.insert_lsn());
    assert_eq!(keys(&recs), (0..seq).map(|s| (1, s)).collect::<Vec<_>>());
}

#[test]
fn enospc_after_reservation_waits_for_space() {
    // A record larger than the ring must be written out in pieces while it is copied; if the
    // disk is full then, the insert (which already reserved its space) waits for space instead
    // of failing and leaving a hole in the WAL.
    let dir = tempfile::tempdir().unwrap();
    let faults = FaultInjector::new();
    let s = WalSettings { faults: Some(Arc::clone(&faults)), ..settings(dir.path(), MB, 32 << 10) };
    let start = s.initial_lsn();
    let wal = Arc::new(Wal::open(s, start).unwrap());
    let mut b = RecordBuilder::new();
    let mut seq = 0;
    while wal.insert_lsn() < start + MB - 10_000 {
        insert_payload(&wal, &mut b, 1, seq, 1000).unwrap();
        seq += 1;
    }
    wal.flush(wal.insert_lsn()).unwrap();
    faults.set_disk_full(true);
    let w = Arc::clone(&wal);
    let t = std::thread::spawn(move || insert_payload(&w, &mut RecordBuilder::new(), 2, 0, 100_000));
    std::thread::sleep(Duration::from_millis(200));
    assert!(!t.is_finished(), "the insert waits while the disk is full");
    assert_eq!(wal.flush(0).map(|_| ()), Ok(()), "nothing is poisoned");
    faults.set_disk_full(false);
    let (s2, _) = t.join().unwrap().unwrap();
    wal.flush(wal.insert_lsn()).unwrap();
    let (recs, end) = read_all(dir.path(), MB, start);
    assert_eq!(end, wal.insert_lsn());
    assert_eq!(recs.len(), seq as usize + 1);
    assert_eq!(recs.last().unwrap().0, s2);
    assert_eq!(keys(&recs).last(), Some(&(2, 0)));
}

#[test]
fn sync_methods_all_work() {
    for m in [SyncMethod::Fdatasync, SyncMethod::Fsync, SyncMethod::OpenDatasync] {
        let dir = tempfile::tempdir().unwrap();
        let s = WalSettings { sync_method: m, ..settings(dir.path(), MB, 64 << 10) };
        let wal = Wal::open(s.clone(), s.initial_lsn()).unwrap();
        let v = fill(&wal, 1, 300, 5000);
        assert_eq!(wal.flushed_lsn(), v.last().unwrap().1);
        let st = wal.stats();
        assert_eq!(st.fsyncs == 0, m == SyncMethod::OpenDatasync, "{m:?}: {st:?}");
        let (recs, _) = read_all(dir.path(), MB, s.initial_lsn());
        assert_eq!(recs.len(), 300, "{m:?}");
        assert_eq!(SyncMethod::parse(m.name()), Some(m));
    }
}

#[test]
fn wal_writer_flushes_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let s = settings(dir.path(), MB, 256 << 10);
    let wal = Arc::new(Wal::open(s.clone(), s.initial_lsn()).unwrap());
    let writer = wal.start_writer(Duration::from_millis(10), 0, 0);
    let mut b = RecordBuilder::new();
    let mut end = 0;
    for seq in 0..200 {
        end = insert_payload(&wal, &mut b, 1, seq, 2000).unwrap().1;
    }
    // A liveness bound of 1,000 polls, not a speed check.
    for _ in 0..1_000 {
        if wal.flushed_lsn() >= end {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(wal.flushed_lsn() >= end, "the WAL writer did not flush");
    assert!(writer.rounds() > 0);
    assert!(writer.stop().is_none());
    assert!(!wal.writer_running.load(Ordering::Acquire));
    let (recs, _) = read_all(dir.path(), MB, s.initial_lsn());
    assert_eq!(recs.len(), 200);
}

#[test]
fn redo_point_check_rejects_stale_decisions() {
    let dir = tempfile::tempdir().unwrap();
    let s = settings(dir.path(), MB, 64 << 10);
    let wal = Wal::open(s.clone(), s.initial_lsn()).unwrap();
    let mut b = RecordBuilder::new();
    let redo0 = wal.redo_point();
    b.begin(1, 0, 1).set_main(b"a");
    assert!(wal.insert_if_redo(&mut b, redo0).unwrap().is_some());
    let redo1 = wal.mark_redo_point();
    assert_eq!(redo1, wal.insert_lsn());
    b.begin(1, 0, 1).set_main(b"b");
    assert_eq!(wal.insert_if_redo(&mut b, redo0).unwrap(), None);
    let (start, _) = wal.insert_if_redo(&mut b, redo1).unwrap().unwrap();
    assert_eq!(start, redo1);
}

#[test]
fn wal_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Wal>();
    assert_send_sync::<Arc<FaultInjector>>();
}

#[test]
fn open_rejects_bad_settings() {
    let dir = tempfile::tempdir().unwrap();
    for s in [
        settings(dir.path(), 3 * MB, 64 << 10),
        settings(dir.path(), MB / 2, 64 << 10),
        settings(dir.path(), MB, 1000),
        WalSettings { insert_locks: 0, ..settings(dir.path(), MB, 64 << 10) },
    ] {
        assert_eq!(Wal::open(s, MB).err().unwrap().code, sqlstate::INVALID_PARAMETER_VALUE);
    }
    assert!(Wal::open(settings(dir.path(), MB, 64 << 10), MB + 3).is_err());
}

/// `cargo test --release -- --ignored --nocapture throughput`: records/s and MB/s for 1, 2, 8
/// sessions, parallel insertion vs one global lock (seed 001's experiment on the WAL alone:
/// ~100-byte records as a skinny-table COPY logs them, background WAL writer, no commits,
/// WAL on tmpfs as the seed ran with fsync off). Environment: WAL_BENCH_SECS (1),
/// WAL_BENCH_RECORD (100), WAL_BENCH_THREADS ("1,2,8"), WAL_BENCH_DIR (/dev/shm),
/// WAL_BENCH_WORK (0: hash rounds of per-record work outside the WAL, standing in for COPY's
/// parsing and tuple forming).
#[test]
#[ignore]
fn throughput() {
    let secs: f64 = std::env::var("WAL_BENCH_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let size: usize = std::env::var("WAL_BENCH_RECORD").ok().and_then(|s| s.parse().ok()).unwrap_or(100);
    // Per-record work outside the WAL (forming the row, as COPY does), in hash rounds.
    let work: u64 = std::env::var("WAL_BENCH_WORK").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let threads_list: Vec<usize> =
        std::env::var("WAL_BENCH_THREADS").ok().map(|s| s.split(',').map(|x| x.parse().unwrap()).collect()).unwrap_or(vec![1, 2, 8]);
    println!(
        "record main data {size} B, {work} hash rounds of work per record, {secs} s per run, cores: {:?}",
        std::thread::available_parallelism().map(|n| n.get())
    );
    println!("{:>8} {:>12} {:>14} {:>10} {:>12} {:>14}", "sessions", "design", "records/s", "MB/s", "lock waits", "wait s/session");
    for &threads in &threads_list {
        for single in [false, true] {
            // On tmpfs by default, so that the disk's write speed does not hide insertion.
            let base = std::env::var("WAL_BENCH_DIR").unwrap_or_else(|_| {
                if Path::new("/dev/shm").is_dir() {
                    "/dev/shm".into()
                } else {
                    std::env::temp_dir().display().to_string()
                }
            });
            let dir = tempfile::tempdir_in(base).unwrap();
            let s = WalSettings { single_lock_insert: single, ..WalSettings::new(dir.path()) };
            let wal = Arc::new(Wal::open(s.clone(), s.initial_lsn()).unwrap());
            let writer = wal.start_writer(Duration::from_millis(10), 0, 0);
            let stop = Arc::new(AtomicU64::new(0));
            let before = lock_waits();
            let t0 = Instant::now();
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let wal = Arc::clone(&wal);
                    let stop = Arc::clone(&stop);
                    std::thread::spawn(move || {
                        let mut b = RecordBuilder::new();
                        let mut main = vec![t as u8; size];
                        let mut n = 0u64;
                        let mut h = t as u64;
                        while stop.load(Ordering::Relaxed) == 0 {
                            for _ in 0..64 {
                                for _ in 0..work {
                                    h = mix(h);
                                }
                                main[0] = h as u8;
                                b.begin(10, 0, 1).add_block(16384, 0, n as u32 / 64, None, &main[..8], false).set_main(&main);
                                wal.insert(&mut b).unwrap();
                                n += 1;
                            }
                        }
                        n
                    })
                })
                .collect();
            std::thread::sleep(Duration::from_secs_f64(secs));
            stop.store(1, Ordering::Relaxed);
            let n: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
            let el = t0.elapsed().as_secs_f64();
            let (waits, wait_ns) = {
                let after = lock_waits();
                (after.0 - before.0, after.1 - before.1)
            };
            drop(writer);
            let bytes = wal.stats().bytes;
            println!(
                "{threads:>8} {:>12} {:>14.0} {:>10.1} {waits:>12} {:>14.3}",
                if single { "single-lock" } else { "parallel" },
                n as f64 / el,
                bytes as f64 / el / 1e6,
                wait_ns as f64 / 1e9 / threads as f64
            );
        }
    }
}

fn lock_waits() -> (u64, u64) {
    crate::lock::lwlock::lwlock_stats()
        .into_iter()
        .filter(|(c, _)| *c == crate::lock::LWLockClass::WalInsert)
        .map(|(_, s)| (s.waits, s.wait_ns))
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

/// Inserts 3 × 2,000 records of 1,500 bytes from three threads (about 9 segments of 1 MB),
/// optionally with a racing caller of `prepare_ahead`, and checks that every record reads back
/// and that start-up removes the segments made ahead past the end. Returns the WAL's stats and
/// how many segments the racer made.
fn insert_with_segments_made_ahead(racing: bool) -> (WalStats, usize) {
    let dir = tempfile::tempdir().unwrap();
    let s = settings(dir.path(), MB, 256 << 10);
    let start = s.initial_lsn();
    let wal = Arc::new(Wal::open(s, start).unwrap());
    let writer = wal.start_writer(Duration::from_millis(10), 64 << 10, 0);
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let racer = racing.then(|| {
        let (wal, done) = (Arc::clone(&wal), Arc::clone(&done));
        std::thread::spawn(move || {
            let mut made = 0;
            while !done.load(Ordering::Acquire) {
                made += wal.prepare_ahead().unwrap();
            }
            made
        })
    });
    let threads: Vec<_> = (0..3u32)
        .map(|t| {
            let wal = Arc::clone(&wal);
            std::thread::spawn(move || fill(&wal, t, 2_000, 1_500))
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    done.store(true, Ordering::Release);
    let by_racer = racer.map_or(0, |r| r.join().unwrap());
    // The last crossing into a new segment kicked the prealloc thread, and the segments after
    // it are not there yet (the writer never went past the end): it makes them. A liveness
    // bound of 2,000 polls, not a speed check.
    for _ in 0..2_000 {
        if !wal.wants_segments() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(writer.stop().is_none());
    let end = wal.insert_lsn();
    assert!(end / MB >= start / MB + 6, "the test crosses several segments");
    // Every segment through the end's + SEGMENTS_AHEAD exists once prepare_ahead returns.
    wal.prepare_ahead().unwrap();
    for segno in end / MB..=end / MB + segment::SEGMENTS_AHEAD {
        assert!(segment_path(dir.path(), segno * MB, MB).exists(), "segment {segno}");
    }
    let (recs, read_end) = read_all(dir.path(), MB, start);
    assert_eq!((recs.len(), read_end), (6_000, end));
    let mut k = keys(&recs);
    k.sort();
    assert_eq!(k, (0..3u32).flat_map(|t| (0..2_000).map(move |s| (t, s))).collect::<Vec<_>>());
    let stats = wal.stats();
    drop(wal);
    // Start-up (invariant 9): nothing after the end's segment survives.
    let wal = Wal::open(settings(dir.path(), MB, 256 << 10), end).unwrap();
    assert!(!segment_path(dir.path(), (end / MB + 1) * MB, MB).exists(), "a segment made ahead outlived start-up");
    drop(wal);
    reopen_and_continue(dir.path(), MB, start, end, 6_000);
    (stats, by_racer)
}

/// The `wal prealloc` thread makes segments ahead of the writer as insertion crosses into new
/// ones (before the final explicit call, nothing else makes any ahead).
#[test]
fn the_prealloc_thread_makes_segments_ahead() {
    let (st, _) = insert_with_segments_made_ahead(false);
    // The final explicit prepare_ahead made at most SEGMENTS_AHEAD of them.
    assert!(st.segments_created_ahead > segment::SEGMENTS_AHEAD, "made ahead: {st:?}");
}

/// A caller of `prepare_ahead` racing the prealloc thread and the writer (which opens segments
/// without the install lock when they are complete): the records all read back.
#[test]
fn segments_made_ahead_race_the_writer() {
    let (st, by_racer) = insert_with_segments_made_ahead(true);
    assert!(st.segments_created_ahead >= by_racer as u64, "{st:?}");
}

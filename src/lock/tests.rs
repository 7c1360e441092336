//! Behaviour of the lock manager as sessions see it: counting, release-all cost, the fast path,
//! queueing, deadlocks, timeouts, logging, and a randomized stress test against a model.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::*;
use crate::error::sqlstate;
use LockMode::*;

const R: LockTag = LockTag::Relation(16385);

fn settings() -> LockSettings {
    LockSettings { deadlock_timeout: Duration::from_millis(200), lock_timeout: Some(Duration::from_secs(5)), ..LockSettings::default() }
}

/// A manager whose log lines are kept.
fn logged_manager(settings: LockSettings) -> (LockManager, Arc<Mutex<Vec<String>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&lines);
    let logger: LockLogger = Box::new(move |line| sink.lock().unwrap().push(line.to_string()));
    (LockManager::with_logger(settings, logger), lines)
}

/// Polls `cond` (a liveness bound of 5,000 polls, not a speed check).
fn wait_until(what: &str, cond: impl Fn() -> bool) {
    for _ in 0..5_000 {
        if cond() {
            return;
        }
        thread::sleep(Duration::from_millis(1));
    }
    panic!("never happened: {what}");
}

fn is_waiting(m: &LockManager, session: u64) -> bool {
    m.locks().iter().any(|l| l.session == session && !l.granted)
}

fn rows(m: &LockManager, session: u64) -> Vec<(LockTag, LockMode, bool, bool)> {
    m.locks().into_iter().filter(|l| l.session == session).map(|l| (l.tag, l.mode, l.granted, l.fastpath)).collect()
}

#[test]
fn reacquisitions_are_counted_and_only_the_last_release_frees() {
    let (m, log) = logged_manager(settings());
    let mut a = m.register(1);
    let mut b = m.register(2);
    let t = LockTag::Object { class: 1259, id: 7 };
    m.lock(&mut a, t, Exclusive).unwrap();
    m.lock(&mut a, t, Exclusive).unwrap();
    assert_eq!(a.local().count(t, Exclusive), 2);
    assert!(!m.try_lock(&mut b, t, RowShare));
    assert!(m.unlock(&mut a, t, Exclusive));
    assert!(m.holds(&a, t, Exclusive));
    assert!(!m.try_lock(&mut b, t, RowShare), "one take is still held");
    assert!(m.unlock(&mut a, t, Exclusive));
    assert!(!m.holds(&a, t, Exclusive));
    assert!(m.try_lock(&mut b, t, RowShare));
    assert!(!m.unlock(&mut a, t, Exclusive), "not held any more");
    assert_eq!(log.lock().unwrap().as_slice(), ["WARNING:  you don't own a lock of type ExclusiveLock"]);
    // Fast-path locks count the same way.
    m.lock(&mut a, R, AccessShare).unwrap();
    m.lock(&mut a, R, AccessShare).unwrap();
    m.unlock(&mut a, R, AccessShare);
    assert_eq!(rows(&m, 1), [(R, AccessShare, true, true)]);
    m.unlock(&mut a, R, AccessShare);
    assert!(rows(&m, 1).is_empty());
}

/// Takes 10,000 locks, releases them all, then runs a one-lock transaction; returns the slots
/// that transaction's release-all visited.
fn slots_visited_after_a_big_transaction(walk_whole_table: bool) -> u64 {
    let m = LockManager::new(LockSettings { release_walks_whole_table: walk_whole_table, ..settings() });
    let mut s = m.register(1);
    for oid in 0..10_000 {
        m.lock(&mut s, LockTag::Relation(oid), AccessShare).unwrap();
    }
    assert_eq!(s.local().len(), 10_000);
    m.release_all(&mut s);
    assert!(m.locks().is_empty() && m.shared_lock_objects() == 0);
    m.lock(&mut s, LockTag::Relation(42), RowExclusive).unwrap();
    let before = s.local().slots_visited();
    m.release_all(&mut s);
    assert!(s.local().is_empty() && m.locks().is_empty());
    s.local().slots_visited() - before
}

#[test]
fn release_all_cost_is_independent_of_the_past() {
    assert_eq!(slots_visited_after_a_big_transaction(false), 1);
    let old = slots_visited_after_a_big_transaction(true);
    assert!(old >= 10_000, "the old design walks every slot ever allocated: {old}");
}

#[test]
fn release_all_frees_segments_of_a_big_transaction() {
    let m = LockManager::new(settings());
    let mut s = m.register(1);
    for id in 0..1000 {
        m.lock(&mut s, LockTag::Object { class: 1, id }, Share).unwrap();
    }
    assert_eq!(s.local().segments_allocated(), 1000usize.div_ceil(local::SEGMENT_SLOTS));
    m.release_all(&mut s);
    assert_eq!(s.local().segments_allocated(), 1);
}

#[test]
fn weak_locks_stay_out_of_the_shared_table_until_a_strong_lock_moves_them() {
    let m = LockManager::new(settings());
    let mut a = m.register(1);
    let r2 = LockTag::Relation(16386);
    m.lock(&mut a, R, AccessShare).unwrap();
    m.lock(&mut a, r2, RowExclusive).unwrap();
    assert_eq!(m.shared_lock_objects(), 0);
    assert_eq!(rows(&m, 1), [(R, AccessShare, true, true), (r2, RowExclusive, true, true)]);

    let m2 = m.clone();
    let strong = thread::spawn(move || {
        let mut b = m2.register(2);
        m2.lock(&mut b, R, AccessExclusive).unwrap();
        let held = m2.holds(&b, R, AccessExclusive);
        m2.release_all(&mut b);
        held
    });
    wait_until("session 2 waits", || is_waiting(&m, 2));
    assert_eq!(rows(&m, 1), [(R, AccessShare, true, false), (r2, RowExclusive, true, true)], "only R's lock moved");
    assert_eq!(m.strong_lock_count(), 1);
    m.unlock(&mut a, R, AccessShare);
    assert!(strong.join().unwrap());
    assert_eq!(m.strong_lock_count(), 0);
    // With no strong lock left, the fast path is open again.
    m.lock(&mut a, R, RowShare).unwrap();
    assert_eq!(rows(&m, 1)[0], (R, RowShare, true, true));
    m.release_all(&mut a);
    assert!(m.locks().is_empty() && m.shared_lock_objects() == 0);
}

#[test]
fn weak_locks_beyond_the_fast_path_slots_go_to_the_shared_table() {
    let m = LockManager::new(LockSettings { fast_path_slots: 16, ..settings() });
    let mut s = m.register(1);
    for oid in 0..100 {
        m.lock(&mut s, LockTag::Relation(oid), AccessShare).unwrap();
    }
    let locks = m.locks();
    assert_eq!(locks.iter().filter(|l| l.fastpath).count(), 16);
    assert_eq!(m.shared_lock_objects(), 84);
    m.release_all(&mut s);
    assert!(m.locks().is_empty() && m.shared_lock_objects() == 0);
}

#[test]
fn try_lock_never_waits_and_gives_back_its_strong_count() {
    let m = LockManager::new(settings());
    let mut a = m.register(1);
    let mut b = m.register(2);
    m.lock(&mut a, R, RowExclusive).unwrap();
    assert!(!m.try_lock(&mut b, R, AccessExclusive));
    assert_eq!(m.strong_lock_count(), 0);
    assert!(!m.holds(&b, R, AccessExclusive) && !is_waiting(&m, 2));
    assert_eq!(rows(&m, 1), [(R, RowExclusive, true, false)], "moved to the shared table by the attempt");
    m.unlock(&mut a, R, RowExclusive);
    assert_eq!(m.shared_lock_objects(), 0);
    assert!(m.try_lock(&mut b, R, AccessExclusive));
}

#[test]
fn access_exclusive_waits_for_row_exclusive_and_later_access_share_queues_behind_it() {
    let m = LockManager::new(settings());
    let mut a = m.register(1);
    m.lock(&mut a, R, RowExclusive).unwrap();
    let order = Arc::new(Mutex::new(Vec::new()));
    let spawn = |id: u64, mode: LockMode| {
        let (m, order) = (m.clone(), Arc::clone(&order));
        thread::spawn(move || {
            let mut s = m.register(id);
            m.lock(&mut s, R, mode).unwrap();
            order.lock().unwrap().push(id);
            if id == 2 {
                thread::sleep(Duration::from_millis(30));
                assert!(is_waiting(&m, 3), "AccessShare is still queued while AccessExclusive is held");
            }
            m.release_all(&mut s);
        })
    };
    let drop_table = spawn(2, AccessExclusive);
    wait_until("the DROP waits", || is_waiting(&m, 2));
    let select = spawn(3, AccessShare);
    wait_until("the SELECT waits", || is_waiting(&m, 3));
    let mut d = m.register(4);
    assert!(!m.try_lock(&mut d, R, AccessShare), "no overtaking a queued AccessExclusive");
    let queue: Vec<_> = m.locks().into_iter().filter(|l| !l.granted).collect();
    assert_eq!(queue.iter().map(|l| l.session).collect::<Vec<_>>(), [2, 3]);
    assert!(queue.iter().all(|l| l.waitstart.is_some()));
    assert!(queue[0].waitstart <= queue[1].waitstart);
    m.release_all(&mut a);
    drop_table.join().unwrap();
    select.join().unwrap();
    assert_eq!(*order.lock().unwrap(), [2, 3]);
    let waits: HashMap<_, _> = m.wait_stats().into_iter().map(|(mode, n, _)| (mode, n)).collect();
    assert_eq!((waits[&AccessExclusive], waits[&AccessShare]), (1, 1));
}

#[test]
fn a_holder_goes_ahead_of_a_waiter_it_blocks() {
    let m = LockManager::new(settings());
    let mut a = m.register(1);
    m.lock(&mut a, R, AccessShare).unwrap();
    let m2 = m.clone();
    let waiter = thread::spawn(move || {
        let mut b = m2.register(2);
        m2.lock(&mut b, R, AccessExclusive).unwrap();
    });
    wait_until("session 2 waits", || is_waiting(&m, 2));
    // RowExclusive conflicts with the queued AccessExclusive, which waits for us anyway.
    m.lock(&mut a, R, RowExclusive).unwrap();
    let row_exclusive_waits = m.wait_stats()[RowExclusive.index()].1;
    assert_eq!(row_exclusive_waits, 0, "granted without waiting");
    assert!(is_waiting(&m, 2));
    m.release_all(&mut a);
    waiter.join().unwrap();
}

#[test]
fn lock_upgrade_deadlock_is_reported_at_once() {
    // With log_lock_waits, a deadlock found by the timed check would first log "still
    // waiting": its absence shows the upgrade deadlock was reported at once.
    let (m, log) = logged_manager(LockSettings { deadlock_timeout: Duration::from_secs(5), log_lock_waits: true, ..settings() });
    let mut a = m.register(1);
    let mut b = m.register(2);
    m.lock(&mut a, R, AccessShare).unwrap();
    m.lock(&mut b, R, AccessShare).unwrap();
    let m2 = m.clone();
    let upgrader = thread::spawn(move || {
        let r = m2.lock(&mut a, R, AccessExclusive);
        m2.release_all(&mut a);
        r
    });
    wait_until("session 1 waits", || is_waiting(&m, 1));
    let err = m.lock(&mut b, R, AccessExclusive).unwrap_err();
    assert!(!log.lock().unwrap().iter().any(|l| l.contains("process 2 still waiting")), "{:?}", log.lock().unwrap());
    assert_eq!(err.code, sqlstate::DEADLOCK_DETECTED);
    assert_eq!(
        err.detail.as_deref(),
        Some(
            "Process 2 waits for AccessExclusiveLock on relation 16385; blocked by process 1.\n\
             Process 1 waits for AccessExclusiveLock on relation 16385; blocked by process 2."
        )
    );
    m.release_all(&mut b);
    upgrader.join().unwrap().unwrap();
}

#[test]
fn opposite_order_deadlock_fails_exactly_one_session() {
    let (m, log) = logged_manager(LockSettings { log_lock_waits: true, lock_timeout: None, ..settings() });
    let barrier = Arc::new(Barrier::new(2));
    let run = |id: u64, first: u32, second: u32| {
        let (m, barrier) = (m.clone(), Arc::clone(&barrier));
        thread::spawn(move || {
            let mut s = m.register(id);
            m.lock(&mut s, LockTag::Relation(first), AccessExclusive).unwrap();
            barrier.wait();
            let r = m.lock(&mut s, LockTag::Relation(second), AccessExclusive);
            m.release_all(&mut s);
            r
        })
    };
    let t12 = run(12, 16384, 16385);
    let t13 = run(13, 16385, 16384);
    let (r12, r13) = (t12.join().unwrap(), t13.join().unwrap());
    let (victim, err) = match (&r12, &r13) {
        (Err(e), Ok(())) => (12, e),
        (Ok(()), Err(e)) => (13, e),
        _ => panic!("exactly one session must fail: {r12:?} {r13:?}"),
    };
    let other = 25 - victim;
    let (mine, theirs) = if victim == 12 { (16385, 16384) } else { (16384, 16385) };
    assert_eq!(err.code, "40P01");
    assert_eq!(err.message, "deadlock detected");
    assert_eq!(
        err.detail.as_deref().unwrap(),
        format!(
            "Process {victim} waits for AccessExclusiveLock on relation {mine}; blocked by process {other}.\n\
             Process {other} waits for AccessExclusiveLock on relation {theirs}; blocked by process {victim}."
        )
    );
    assert_eq!(err.hint.as_deref(), Some("See server log for query details."));
    let log = log.lock().unwrap();
    let prefix = format!("LOG:  process {victim} detected deadlock while waiting for AccessExclusiveLock on relation {mine} after ");
    assert!(log.iter().any(|l| l.starts_with(&prefix)), "{log:?}");
    assert!(m.locks().is_empty() && m.strong_lock_count() == 0);
}

#[test]
fn lock_timeout_fails_with_55p03() {
    let m = LockManager::new(LockSettings { lock_timeout: Some(Duration::from_millis(100)), ..settings() });
    let mut a = m.register(1);
    let mut b = m.register(2);
    m.lock(&mut a, R, AccessExclusive).unwrap();
    let err = m.lock(&mut b, R, AccessShare).unwrap_err();
    assert_eq!(err.code, sqlstate::LOCK_NOT_AVAILABLE);
    assert_eq!(err.to_string(), "ERROR:  canceling statement due to lock timeout");
    assert!(!is_waiting(&m, 2) && !m.holds(&b, R, AccessShare));
    m.release_all(&mut a);
    m.lock(&mut b, R, AccessShare).unwrap();
}

#[test]
fn long_waits_are_logged_once_with_holders_and_queue_then_the_acquisition() {
    let (m, log) = logged_manager(LockSettings { log_lock_waits: true, deadlock_timeout: Duration::from_millis(50), ..settings() });
    let mut a = m.register(12);
    m.lock(&mut a, R, AccessExclusive).unwrap();
    let m2 = m.clone();
    let waiter = thread::spawn(move || {
        let mut b = m2.register(13);
        m2.lock(&mut b, R, AccessShare).unwrap();
    });
    wait_until("the wait is logged", || !log.lock().unwrap().is_empty());
    thread::sleep(Duration::from_millis(120)); // two more deadlock checks, no more lines
    m.release_all(&mut a);
    waiter.join().unwrap();
    let log = log.lock().unwrap();
    assert_eq!(log.len(), 2, "{log:?}");
    let (first, detail) = log[0].split_once('\n').unwrap();
    assert!(first.starts_with("LOG:  process 13 still waiting for AccessShareLock on relation 16385 after "), "{first}");
    assert!(first.ends_with(" ms"));
    assert_eq!(detail, "DETAIL:  Process holding the lock: 12. Wait queue: 13.");
    assert!(log[1].starts_with("LOG:  process 13 acquired AccessShareLock on relation 16385 after "), "{}", log[1]);
}

#[test]
fn dropping_a_session_releases_its_locks_and_its_id() {
    let m = LockManager::new(settings());
    let mut a = m.register(1);
    m.lock(&mut a, R, AccessExclusive).unwrap();
    m.lock(&mut a, LockTag::Relation(1), AccessShare).unwrap();
    drop(a);
    assert!(m.locks().is_empty() && m.strong_lock_count() == 0);
    let mut again = m.register(1);
    assert!(m.try_lock(&mut again, R, AccessExclusive));
    m.unregister(again);
    assert!(m.locks().is_empty());
}

/// A tiny deterministic generator for the stress test.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

type Model = Mutex<HashMap<LockTag, Vec<(u64, LockMode)>>>;

fn model_granted(model: &Model, tag: LockTag, session: u64, mode: LockMode) {
    let mut model = model.lock().unwrap();
    let holders = model.entry(tag).or_default();
    for &(other, held) in holders.iter() {
        assert!(other == session || !mode.conflicts_with(held), "{session} got {mode} on {tag} while {other} holds {held}");
    }
    holders.push((session, mode));
}

fn model_releasing(model: &Model, tag: LockTag, session: u64, mode: LockMode) {
    let mut model = model.lock().unwrap();
    let holders = model.get_mut(&tag).unwrap();
    let i = holders.iter().position(|&h| h == (session, mode)).unwrap();
    holders.swap_remove(i);
}

#[derive(Default)]
struct Outcomes {
    grants: AtomicU64,
    deadlocks: AtomicU64,
    timeouts: AtomicU64,
}

fn random_mode(rng: &mut XorShift) -> LockMode {
    if rng.next(10) < 8 {
        [AccessShare, RowShare, RowExclusive][rng.next(3) as usize]
    } else {
        LockMode::ALL[rng.next(8) as usize]
    }
}

/// One session's transactions: random locks, a short hold, then release one by one or all.
fn stress_session(m: &LockManager, model: &Model, out: &Outcomes, id: u64, iterations: usize) {
    let mut s = m.register(id);
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15 ^ (id + 1).wrapping_mul(0x2545_f491_4f6c_dd1d));
    for _ in 0..iterations {
        if out.timeouts.load(Ordering::Relaxed) > 0 {
            break; // a lost wake-up: fail now rather than after many more timeouts
        }
        let mut held = Vec::new();
        for _ in 0..1 + rng.next(3) {
            let (tag, mode) = (LockTag::Relation(16384 + rng.next(8) as u32), random_mode(&mut rng));
            match m.lock(&mut s, tag, mode) {
                Ok(()) => {
                    model_granted(model, tag, id, mode);
                    out.grants.fetch_add(1, Ordering::Relaxed);
                    held.push((tag, mode));
                }
                Err(e) if e.code == sqlstate::DEADLOCK_DETECTED => {
                    out.deadlocks.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                Err(e) => {
                    assert_eq!(e.code, sqlstate::LOCK_NOT_AVAILABLE, "{e}");
                    out.timeouts.fetch_add(1, Ordering::Relaxed);
                    break;
                }
            }
        }
        for _ in 0..rng.next(50) {
            std::hint::spin_loop();
        }
        if rng.next(2) == 0 {
            held.iter().for_each(|&(tag, mode)| model_releasing(model, tag, id, mode));
            m.release_all(&mut s);
        } else {
            while !held.is_empty() {
                let (tag, mode) = held.swap_remove(rng.next(held.len() as u64) as usize);
                model_releasing(model, tag, id, mode);
                assert!(m.unlock(&mut s, tag, mode));
            }
        }
        assert!(s.local().is_empty());
    }
}

#[test]
fn stress_random_lock_sets_never_grant_conflicting_locks_and_never_hang() {
    const SESSIONS: u64 = 16;
    const ITERATIONS: usize = 2_000;
    let m = LockManager::new(LockSettings {
        deadlock_timeout: Duration::from_millis(10),
        lock_timeout: Some(Duration::from_secs(4)),
        fast_path_slots: 16,
        ..LockSettings::default()
    });
    let model = Arc::new(Model::default());
    let out = Arc::new(Outcomes::default());
    let start = Instant::now();
    let threads: Vec<_> = (1..=SESSIONS)
        .map(|id| {
            let (m, model, out) = (m.clone(), Arc::clone(&model), Arc::clone(&out));
            thread::spawn(move || stress_session(&m, &model, &out, id, ITERATIONS))
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let (grants, deadlocks, timeouts) =
        (out.grants.load(Ordering::Relaxed), out.deadlocks.load(Ordering::Relaxed), out.timeouts.load(Ordering::Relaxed));
    eprintln!("stress: {grants} grants, {deadlocks} deadlocks resolved, {timeouts} timeouts in {:?}", start.elapsed());
    assert_eq!(timeouts, 0, "a waiter was never woken");
    assert!(grants >= SESSIONS * ITERATIONS as u64 / 2);
    assert!(m.locks().is_empty());
    assert_eq!(m.shared_lock_objects(), 0);
    assert_eq!(m.strong_lock_count(), 0);
    assert!(model.lock().unwrap().values().all(Vec::is_empty));
}

#[test]
fn manager_is_shared_and_session_state_moves_between_threads() {
    fn shared<T: Send + Sync>() {}
    fn movable<T: Send>() {}
    shared::<LockManager>();
    movable::<SessionLocks>();
}

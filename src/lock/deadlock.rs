//! Deadlock detection on the wait-for graph, and the 40P01 error PostgreSQL reports.
//!
//! A waiting session has an edge to every session it waits for: holders of a granted mode
//! that conflicts with its request, and earlier waiters in the same queue whose request
//! conflicts (the queue is FIFO, so those go first). A cycle through the checking session is a
//! deadlock. Unlike PostgreSQL's deadlock.c, queues are never reordered to break a cycle made
//! partly of "soft" (queue-order) edges: the checking session is always the victim, which is
//! simpler and still resolves every cycle.
//!
//! The graph is read by the manager while it holds every partition mutex, in ascending order
//! (the one place where more than one partition mutex is held; see `manager.rs`, invariant 2),
//! so it is a consistent snapshot.

use std::collections::HashSet;

use super::mode::LockMode;
use super::tag::LockTag;
use crate::error::{sqlstate, PgError};

/// What a waiting session waits for.
pub(crate) struct WaitsFor {
    pub tag: LockTag,
    pub mode: LockMode,
    pub blockers: Vec<u64>,
}

/// One edge of a cycle: `waiter` waits for `mode` on `tag`, blocked by `blocker`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Edge {
    pub waiter: u64,
    pub tag: LockTag,
    pub mode: LockMode,
    pub blocker: u64,
}

struct Frame {
    session: u64,
    waits: WaitsFor,
    next: usize,
}

/// Depth-first search for a cycle through `start`; `waits_for(s)` is None when `s` is not
/// waiting. Returns the cycle's edges, starting with `start`'s own.
pub(crate) fn find_cycle(start: u64, mut waits_for: impl FnMut(u64) -> Option<WaitsFor>) -> Option<Vec<Edge>> {
    let mut stack = vec![Frame { session: start, waits: waits_for(start)?, next: 0 }];
    let mut visited = HashSet::from([start]);
    while let Some(top) = stack.last_mut() {
        let Some(&blocker) = top.waits.blockers.get(top.next) else {
            stack.pop();
            continue;
        };
        top.next += 1;
        if blocker == start {
            return Some(edges(&stack));
        }
        if !visited.insert(blocker) {
            continue;
        }
        if let Some(waits) = waits_for(blocker) {
            stack.push(Frame { session: blocker, waits, next: 0 });
        }
    }
    None
}

/// The edges along the DFS path: each frame's last-followed blocker.
fn edges(stack: &[Frame]) -> Vec<Edge> {
    stack.iter().map(|f| Edge { waiter: f.session, tag: f.waits.tag, mode: f.waits.mode, blocker: f.waits.blockers[f.next - 1] }).collect()
}

/// PostgreSQL's `DeadLockReport`: one DETAIL line per edge of the cycle.
pub(crate) fn deadlock_error(cycle: &[Edge]) -> PgError {
    let detail: Vec<String> = cycle
        .iter()
        .map(|e| format!("Process {} waits for {} on {}; blocked by process {}.", e.waiter, e.mode, e.tag, e.blocker))
        .collect();
    PgError::new(sqlstate::DEADLOCK_DETECTED, "deadlock detected")
        .with_detail(detail.join("\n"))
        .with_hint("See server log for query details.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn graph(edges: &[(u64, u32, &[u64])]) -> impl FnMut(u64) -> Option<WaitsFor> {
        let map: HashMap<u64, (u32, Vec<u64>)> = edges.iter().map(|(s, rel, b)| (*s, (*rel, b.to_vec()))).collect();
        move |s| map.get(&s).map(|(rel, b)| WaitsFor { tag: LockTag::Relation(*rel), mode: LockMode::AccessExclusive, blockers: b.clone() })
    }

    #[test]
    fn two_session_cycle_is_reported_as_postgres_does() {
        let cycle = find_cycle(12, graph(&[(12, 16385, &[13]), (13, 16384, &[12])])).expect("cycle");
        let e = deadlock_error(&cycle);
        assert_eq!(e.code, "40P01");
        assert_eq!(e.message, "deadlock detected");
        assert_eq!(
            e.detail.as_deref(),
            Some(
                "Process 12 waits for AccessExclusiveLock on relation 16385; blocked by process 13.\n\
                 Process 13 waits for AccessExclusiveLock on relation 16384; blocked by process 12."
            )
        );
        assert_eq!(e.hint.as_deref(), Some("See server log for query details."));
    }

    #[test]
    fn longer_cycles_follow_the_path_and_skip_dead_ends() {
        let g = graph(&[(1, 10, &[5, 2]), (5, 50, &[6]), (2, 20, &[3]), (3, 30, &[1])]);
        let cycle = find_cycle(1, g).expect("cycle");
        let waiters: Vec<_> = cycle.iter().map(|e| (e.waiter, e.blocker)).collect();
        assert_eq!(waiters, [(1, 2), (2, 3), (3, 1)]);
    }

    #[test]
    fn cycles_not_through_the_start_are_not_ours() {
        assert!(find_cycle(1, graph(&[(1, 10, &[2]), (2, 20, &[3]), (3, 30, &[2])])).is_none());
        assert!(find_cycle(1, graph(&[(2, 20, &[1])])).is_none(), "start not waiting");
        assert!(find_cycle(1, graph(&[(1, 10, &[2])])).is_none(), "blocker not waiting");
    }
}

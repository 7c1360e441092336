//! Failpoints: named places in the engine where a test or the crash torture can run code of
//! its own, to land a checkpoint (or a crash) exactly inside a window that a race would hit
//! only rarely.
//!
//! Each database's WAL carries its own set ([`crate::wal::Wal::failpoints`]), so tests in one
//! process do not reach into each other. With nothing set, `hit` is one relaxed atomic load.
//!
//! Invariant: an action runs on the thread that hit the failpoint, with whatever that thread
//! holds (content locks, for one), so it must not wait for those.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

type Action = Arc<dyn Fn() + Send + Sync>;

/// A database's failpoints.
#[derive(Default)]
pub struct Failpoints {
    any: AtomicBool,
    actions: Mutex<HashMap<&'static str, Action>>,
}

impl Failpoints {
    /// Runs `action` each time `name` is hit, until cleared.
    pub fn set(&self, name: &'static str, action: impl Fn() + Send + Sync + 'static) {
        let mut m = self.actions.lock().unwrap_or_else(|e| e.into_inner());
        m.insert(name, Arc::new(action));
        self.any.store(true, Ordering::Release);
    }

    pub fn clear(&self, name: &'static str) {
        let mut m = self.actions.lock().unwrap_or_else(|e| e.into_inner());
        m.remove(name);
        self.any.store(!m.is_empty(), Ordering::Release);
    }

    /// Runs the action set for `name`, if any.
    #[inline]
    pub fn hit(&self, name: &'static str) {
        if !self.any.load(Ordering::Relaxed) {
            return;
        }
        let action = self.actions.lock().unwrap_or_else(|e| e.into_inner()).get(name).cloned();
        if let Some(a) = action {
            a();
        }
    }
}

impl std::fmt::Debug for Failpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Failpoints")
    }
}

//! Access methods: heap tables ([`heap`]). The free space map and B-tree indexes arrive with
//! later issues.

pub mod heap;

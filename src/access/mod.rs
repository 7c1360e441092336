//! Access methods: heap tables ([`heap`]) and their free space map ([`fsm`]). B-tree indexes
//! arrive with a later issue.

pub mod fsm;
pub mod heap;

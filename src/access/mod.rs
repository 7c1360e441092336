//! Access methods: heap tables ([`heap`]), their free space map ([`fsm`]) and B-tree indexes
//! ([`btree`]).

pub mod btree;
pub mod fsm;
pub mod heap;
pub mod sequence;

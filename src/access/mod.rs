//! Access methods: heap tables ([`heap`]), their free space map ([`fsm`]) and visibility map
//! ([`vm`]), and B-tree indexes ([`btree`]).

pub mod btree;
pub mod fsm;
pub mod heap;
pub mod sequence;
pub mod vm;

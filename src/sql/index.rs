//! Index access for row statements (filled in with the B-tree access method).

use super::expr::Scalar;
use crate::access::heap::dml::Tid;
use crate::catalog::{Index, Table};
use crate::error::{PgError, Result};
use crate::session::Session;

/// Adds entries for a new heap version to every index of `table`.
pub(crate) fn insert_entries(_s: &mut Session, table: &Table, _stored: &[Option<Vec<u8>>], _tid: Tid) -> Result<()> {
    if table.indexes.is_empty() {
        return Ok(());
    }
    Err(PgError::feature("indexes are not supported yet"))
}

/// TIDs an index scan returns.
pub(crate) fn scan_tids(
    _s: &Session,
    _table: &Table,
    _ix: &Index,
    _eq: &[Scalar],
    _lo: Option<&(Scalar, bool)>,
    _hi: Option<&(Scalar, bool)>,
    _params: &[Option<String>],
) -> Result<Vec<Tid>> {
    Err(PgError::feature("indexes are not supported yet"))
}

//! COPY FROM and COPY TO against tables: the glue between the format readers/writers and the
//! heap.
//!
//! COPY FROM forms each row's tuple straight from the parsed fields (type input writes the
//! stored form into the tuple builder; nothing is allocated per value), moves big values out of
//! line, and hands batches of about 64 kB of tuples to the heap's multi-insert, which fills
//! whole pages. Memory stays flat whatever the input size.
//!
//! Invariants:
//! 1. A COPY FROM runs in its transaction: if any row fails, the transaction aborts and none of
//!    the rows it inserted is visible (they are dead tuples until VACUUM); the table stays
//!    usable.
//! 2. Errors name the relation, the line (tuple number for binary), the column and the value,
//!    in PostgreSQL's CONTEXT form.
//! 3. The input is taken in chunks of `heapstore.copy_chunk_size` bytes (whole records, measured
//!    by [`RowRef::size`]), and a batch never spans
//!    two chunks. Within a chunk, rows are formed in order, each full batch goes to the heap and
//!    then to the indexes, and the first error stops the chunk; chunks are taken in input order.
//!    A serial COPY and a parallel one (`WITH (PARALLEL n)`, `copy::parallel`) therefore
//!    make the same batches and fail on the same first error: same line, column and value.

use super::{CopyFormat, CopyOptions, CopyReader, CopyWriter, Field, RowRef};
use crate::access::heap::{self, toast, tuple, BulkInsert, Flow};
use crate::buffer::{BufferPool, Pins};
use crate::catalog::{fold_ident, Table};
use crate::error::{sqlstate, PgError, Result};
use crate::lock::LockMode;
use crate::session::CopyIo;
use crate::session::{QueryResult, Session};
use crate::types::SqlType;
use sqlparser::ast::{CopyLegacyCsvOption, CopyLegacyOption, CopyOption, CopySource, CopyTarget};
use std::io::{Read, Write};

/// Bytes of formed tuples handed to the heap at once: PostgreSQL's MAX_BUFFERED_BYTES. Small
/// enough that a batch is still in the core's cache when it is copied into pages, which
/// matters once sessions outnumber cores and each time slice starts with a cold cache (with
/// 256 kB, 32 sessions on 2 cores spent ~15% more CPU per GB than 4 did); large enough that a
/// batch needs 8 pages or more, so extending for it uses posix_fallocate, not written zeros.
const BATCH_BYTES: usize = 64 << 10;
/// PostgreSQL's limit on each value shown in "Failing row contains (...)".
const MAX_FIELD_DISPLAY_BYTES: usize = 64;

/// The options of a COPY statement, checked for its direction (`from`: COPY FROM), with its
/// FORCE options still to be resolved against its columns. `force_quote_all`: the statement
/// said `FORCE_QUOTE *` (taken out of its text, as sqlparser does not read it).
pub fn copy_options(
    options: &[CopyOption],
    legacy: &[CopyLegacyOption],
    force_quote_all: bool,
    from: bool,
) -> Result<(CopyOptions, super::ForceOptions)> {
    let (pairs, forces) = option_pairs(options, legacy, force_quote_all)?;
    Ok((CopyOptions::with_forces(&pairs, &forces, from)?, forces))
}

/// An option's name and value, as [`CopyOptions::from_pairs`] takes them.
type OptionPair = (String, Option<String>);

/// Turns sqlparser's COPY options (new and legacy syntax) into name/value pairs and the
/// FORCE options' column lists.
fn option_pairs(
    options: &[CopyOption],
    legacy: &[CopyLegacyOption],
    force_quote_all: bool,
) -> Result<(Vec<OptionPair>, super::ForceOptions)> {
    let mut p: Vec<(String, Option<String>)> = Vec::new();
    let mut forces = super::ForceOptions::default();
    let names = |cols: &[sqlparser::ast::Ident]| Some(cols.iter().map(fold_ident).collect::<Vec<_>>());
    if force_quote_all {
        forces.set("force_quote", None)?;
    }
    let mut push = |n: &str, v: String| p.push((n.to_string(), Some(v)));
    for o in options {
        match o {
            // An unquoted name folds to lower case (`FORMAT CSV`), a quoted one does not.
            CopyOption::Format(f) => push("format", crate::catalog::fold_ident(f)),
            CopyOption::Freeze(b) => push("freeze", b.to_string()),
            CopyOption::Delimiter(c) => push("delimiter", c.to_string()),
            CopyOption::Null(s) => push("null", s.clone()),
            CopyOption::Header(b) => push("header", b.to_string()),
            CopyOption::Quote(c) => push("quote", c.to_string()),
            CopyOption::Escape(c) => push("escape", c.to_string()),
            CopyOption::Encoding(e) => push("encoding", e.clone()),
            CopyOption::ForceQuote(cols) => forces.set("force_quote", names(cols))?,
            CopyOption::ForceNotNull(cols) => forces.set("force_not_null", names(cols))?,
            CopyOption::ForceNull(cols) => forces.set("force_null", names(cols))?,
        }
    }
    for o in legacy {
        match o {
            CopyLegacyOption::Binary => push("format", "binary".into()),
            CopyLegacyOption::Delimiter(c) => push("delimiter", c.to_string()),
            CopyLegacyOption::Null(s) => push("null", s.clone()),
            CopyLegacyOption::Csv(opts) => {
                push("format", "csv".into());
                for c in opts {
                    match c {
                        CopyLegacyCsvOption::Header => push("header", "true".into()),
                        CopyLegacyCsvOption::Quote(q) => push("quote", q.to_string()),
                        CopyLegacyCsvOption::Escape(e) => push("escape", e.to_string()),
                        CopyLegacyCsvOption::ForceQuote(cols) => forces.set("force_quote", names(cols))?,
                        CopyLegacyCsvOption::ForceNotNull(cols) => forces.set("force_not_null", names(cols))?,
                    }
                }
            }
            other => return Err(PgError::syntax(format!("syntax error at or near \"{other}\""))),
        }
    }
    Ok((p, forces))
}

/// A COPY statement as parsed, with the `PARALLEL n` option sqlparser does not know.
pub struct CopyStatement {
    pub source: CopySource,
    pub to: bool,
    pub target: CopyTarget,
    pub options: Vec<CopyOption>,
    pub legacy: Vec<CopyLegacyOption>,
    pub parallel: Option<u32>,
    /// `FORCE_QUOTE *` (which sqlparser does not read).
    pub force_quote_all: bool,
}

/// Runs one COPY statement.
pub fn run_copy(s: &mut Session, stmt: CopyStatement, io: &mut CopyIo<'_>) -> Result<QueryResult> {
    let CopyStatement { source, to, target, options, legacy, parallel, force_quote_all } = stmt;
    let CopySource::Table { table_name, columns } = source else {
        return Err(PgError::internal("COPY (query) TO runs in the SQL layer"));
    };
    let tname = crate::catalog::relation_key(&table_name)?;
    let table = s.table(&tname)?;
    let (mut opts, forces) = copy_options(&options, &legacy, force_quote_all, !to)?;
    let table = s.lock_table_current(&table, if to { LockMode::AccessShare } else { LockMode::RowExclusive })?;
    let cols = column_list(&table, &columns)?;
    let names: Vec<String> = cols.iter().map(|&i| table.columns[i].name.clone()).collect();
    forces.resolve(&mut opts, &names, |n| match table.column_index(n) {
        Some(_) => Ok(()),
        None => Err(PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{n}\" of relation \"{}\" does not exist", table.name))),
    })?;
    if opts.freeze {
        if to {
            return Err(PgError::feature("COPY FREEZE cannot be used with COPY TO"));
        }
        // PostgreSQL's precondition: the table's file is this transaction's own.
        let table = s.table(&tname)?;
        if !s.txn().new_files.contains(&table.relfile) {
            return Err(PgError::new(
                "55000",
                "cannot perform COPY FREEZE because the table was not created or truncated in the current subtransaction",
            ));
        }
    }
    if to && parallel.is_some() {
        return Err(PgError::feature("COPY PARALLEL cannot be used with COPY TO"));
    }
    let parallel = parallel.unwrap_or(1) as usize;
    let to_client = to && matches!(target, CopyTarget::Stdout);
    let n = match (to, target) {
        (_, CopyTarget::Program { .. }) => return Err(PgError::feature("COPY ... PROGRAM is not supported")),
        (false, CopyTarget::Stdin) => {
            let src = io
                .stdin
                .as_deref_mut()
                .ok_or_else(|| PgError::feature("COPY FROM STDIN needs a data source (the library's Session::execute_with_io)"))?;
            copy_from(s, &table, &cols, opts, src, parallel)?
        }
        (false, CopyTarget::File { filename }) => {
            let f = std::fs::File::open(&filename).map_err(|e| {
                PgError::new(
                    if e.kind() == std::io::ErrorKind::NotFound { sqlstate::UNDEFINED_FILE } else { sqlstate::IO_ERROR },
                    format!("could not open file \"{filename}\" for reading: {}", os_msg(&e)),
                )
            })?;
            copy_from(s, &table, &cols, opts, &mut &f, parallel)?
        }
        (true, CopyTarget::Stdout) => {
            let dst = io
                .stdout
                .as_deref_mut()
                .ok_or_else(|| PgError::feature("COPY TO STDOUT needs a destination (the library's Session::execute_with_io)"))?;
            copy_to(s, &table, &cols, opts, dst, true)?
        }
        (true, CopyTarget::File { filename }) => {
            let f = std::fs::File::create(&filename)
                .map_err(|e| PgError::new(sqlstate::IO_ERROR, format!("could not open file \"{filename}\" for writing: {}", os_msg(&e))))?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
            let n = copy_to(s, &table, &cols, opts, &mut w, false)?;
            w.flush().map_err(|e| PgError::new(sqlstate::IO_ERROR, format!("could not write to file \"{filename}\": {}", os_msg(&e))))?;
            n
        }
        (false, CopyTarget::Stdout) | (true, CopyTarget::Stdin) => return Err(PgError::syntax("COPY FROM STDOUT / TO STDIN is not valid")),
    };
    if !to {
        s.count_changes(table.oid, |p| p.inserted += n);
    }
    let mut r = QueryResult::tagged(&format!("COPY {n}"));
    r.wrote_to_client = to_client;
    Ok(r)
}

fn os_msg(e: &std::io::Error) -> String {
    // "No such file or directory (os error 2)" -> PostgreSQL's "No such file or directory".
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn column_list(table: &Table, columns: &[sqlparser::ast::Ident]) -> Result<Vec<usize>> {
    if columns.is_empty() {
        return Ok((0..table.columns.len()).collect());
    }
    let mut out: Vec<usize> = Vec::with_capacity(columns.len());
    for c in columns {
        let n = fold_ident(c);
        let i = table.column_index(&n).ok_or_else(|| {
            PgError::new(sqlstate::UNDEFINED_COLUMN, format!("column \"{n}\" of relation \"{}\" does not exist", table.name))
        })?;
        if out.contains(&i) {
            return Err(PgError::new(sqlstate::DUPLICATE_COLUMN, format!("column \"{n}\" specified more than once")));
        }
        out.push(i);
    }
    Ok(out)
}

/// What every loader of one COPY FROM shares: the table's shape, the limits, the transaction
/// and how the writes are logged. Shared read-only by the threads of a parallel COPY.
pub(super) struct LoadCtx<'a> {
    pub(super) shared: &'a crate::db::Shared,
    pub(super) table: &'a Table,
    types: Vec<SqlType>,
    fixed: Vec<bool>,
    /// For each table column, the COPY field that fills it.
    src_of: Vec<Option<usize>>,
    /// For each table column no field fills: its DEFAULT (`exec::rows::Defaults`).
    defaults: Vec<DefaultFill>,
    /// The table's CHECK constraints.
    checks: crate::exec::rows::Checks,
    threshold: usize,
    max_size: usize,
    pub(super) xid: crate::txn::Xid,
    cid: crate::txn::CommandId,
    use_fsm: bool,
    fpw: bool,
    wal: bool,
    pub(super) index_wal: bool,
    touched: Option<std::sync::Arc<crate::access::heap::dml::TouchLog>>,
    /// Input COPY FROM takes as one unit (by [`RowRef::size`]): a parallel COPY hands out
    /// chunks of this much; a serial one ends a batch at the same cuts, so that both make the
    /// same batches and report the same first error (invariant 3).
    pub(super) chunk_bytes: usize,
}

/// How a column the COPY's field list leaves out is filled.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum DefaultFill {
    /// NULL (no DEFAULT, or a DEFAULT that is NULL).
    Null,
    /// A DEFAULT evaluated once for the whole COPY, in stored form.
    Stored(Vec<u8>),
    /// A DEFAULT evaluated per row (`nextval`): by the session's thread, so such a COPY runs
    /// serially.
    PerRow,
}

impl<'a> LoadCtx<'a> {
    fn new(
        s: &mut Session,
        shared: &'a crate::db::Shared,
        table: &'a Table,
        cols: &[usize],
        defaults: Vec<DefaultFill>,
        checks: crate::exec::rows::Checks,
    ) -> LoadCtx<'a> {
        let xid = s.xid();
        let cid = s.txn().cid;
        let bs = shared.pool.block_size();
        let ncols = table.columns.len();
        let types: Vec<SqlType> = table.columns.iter().map(|c| c.ty).collect();
        let fixed: Vec<bool> = types.iter().map(|t| t.fixed_len().is_some()).collect();
        let mut src_of: Vec<Option<usize>> = vec![None; ncols];
        for (k, &c) in cols.iter().enumerate() {
            src_of[c] = Some(k);
        }
        let threshold = match shared.settings.bytes("heapstore.toast_threshold") {
            0 => toast::default_threshold(bs),
            n => n as usize,
        };
        let wal = crate::exec::rows::wal_for(s, table);
        let (_, index_wal) = crate::exec::rows::Maintainer::prepare(s, table);
        LoadCtx {
            shared,
            table,
            types,
            fixed,
            src_of,
            defaults,
            checks,
            threshold,
            max_size: heap::max_tuple_size(bs),
            xid,
            cid,
            use_fsm: shared.settings.bool("heapstore.use_fsm"),
            fpw: shared.settings.bool("full_page_writes"),
            wal,
            index_wal,
            touched: s.touch_log(),
            chunk_bytes: shared.settings.bytes("heapstore.copy_chunk_size") as usize,
        }
    }
}

/// Forms tuples from rows and hands them to the heap in batches: one per loading thread,
/// with its own bulk inserts (target page, ring, pages extended ahead) and pins.
pub(super) struct RowLoader<'a> {
    ctx: &'a LoadCtx<'a>,
    pins: &'a Pins,
    /// Evaluates a per-row DEFAULT of a column (serial COPY only: [`DefaultFill::PerRow`]).
    pub(super) per_row: Option<&'a dyn Fn(usize) -> Result<Option<Vec<u8>>>>,
    b: tuple::TupleBuilder,
    pub(super) bulk: BulkInsert<'a>,
    toast_bulk: Option<BulkInsert<'a>>,
    /// Formed tuples not yet inserted (after [`flush`](Self::flush): the batch just
    /// inserted, its TIDs in `bulk.placed` when the table has indexes).
    pub(super) batch: Vec<u8>,
    pub(super) lens: Vec<usize>,
}

impl<'a> RowLoader<'a> {
    pub(super) fn new(ctx: &'a LoadCtx<'a>, pins: &'a Pins) -> RowLoader<'a> {
        let pool = &ctx.shared.pool;
        let wal = ctx.wal.then_some(&*ctx.shared.wal);
        let mut bulk = BulkInsert::logged(pool, pins, ctx.table.relfile, ctx.use_fsm, wal, ctx.fpw);
        bulk.touched = ctx.touched.as_deref();
        bulk.pre_extend(&ctx.shared.pre_extend);
        if !ctx.table.indexes.is_empty() {
            bulk.placed = Some(Vec::new());
        }
        let toast_bulk = ctx.table.toast_relfile.map(|r| {
            let mut b = BulkInsert::logged(pool, pins, r, ctx.use_fsm, wal, ctx.fpw);
            b.touched = ctx.touched.as_deref();
            b
        });
        RowLoader {
            ctx,
            pins,
            per_row: None,
            b: tuple::TupleBuilder::new(ctx.table.columns.len()),
            bulk,
            toast_bulk,
            batch: Vec::with_capacity(BATCH_BYTES + pool.block_size()),
            lens: Vec::with_capacity(4096),
        }
    }

    /// Forms `row`'s tuple (values out of line as needed) and adds it to the batch; true when
    /// the batch is full and should be flushed.
    pub(super) fn add(&mut self, row: RowRef<'_>) -> Result<bool> {
        let ctx = self.ctx;
        let table = ctx.table;
        let b = &mut self.b;
        b.begin();
        for c in 0..table.columns.len() {
            let ty = &ctx.types[c];
            let k = ctx.src_of[c];
            if k.is_none() {
                match &ctx.defaults[c] {
                    DefaultFill::Null => b.push_null(),
                    DefaultFill::Stored(v) if ctx.fixed[c] => b.push_fixed(v),
                    DefaultFill::Stored(v) => b.push_varlena(v),
                    DefaultFill::PerRow => {
                        let f = self.per_row.ok_or_else(|| PgError::internal("a per-row DEFAULT in a COPY without the session"))?;
                        match f(c).map_err(|e| e.with_context(row.line_context()))? {
                            None => b.push_null(),
                            Some(v) if ctx.fixed[c] => b.push_fixed(&v),
                            Some(v) => b.push_varlena(&v),
                        }
                    }
                }
                continue;
            }
            match k.and_then(|k| row.field(k)) {
                None => b.push_null(),
                Some(Field::Text(v)) => b
                    .push_with(ctx.fixed[c], |out| ty.input_text(v, out))
                    .map_err(|e| e.add_context(row.column_context(k.expect("listed"))))?,
                Some(Field::Bytes(v)) => b
                    .push_with(ctx.fixed[c], |out| ty.recv_binary(v, out))
                    .map_err(|e| e.add_context(row.column_context(k.expect("listed"))))?,
            }
        }
        for (c, col) in table.columns.iter().enumerate() {
            if col.not_null && b.is_null(c) {
                let detail = failing_row(b, &ctx.types, &ctx.shared.pool, self.pins);
                return Err(PgError::new(
                    sqlstate::NOT_NULL_VIOLATION,
                    format!("null value in column \"{}\" of relation \"{}\" violates not-null constraint", col.name, table.name),
                )
                .with_detail(detail)
                .with_context(row.line_context())
                .with_table(table)
                .with_column(&col.name));
            }
        }
        if !ctx.checks.is_empty() {
            let t = b.finish().to_vec();
            let mut attrs = Vec::new();
            tuple::deform(&t, &ctx.types, &mut attrs).map_err(|c| PgError::new(sqlstate::DATA_CORRUPTED, c.0))?;
            let mut vals = Vec::with_capacity(attrs.len());
            let mut scratch = Vec::new();
            for (i, a) in attrs.iter().enumerate() {
                vals.push(match a {
                    None => crate::types::Value::Null,
                    Some(a) => crate::types::Value::decode(&ctx.types[i], attr_bytes(&ctx.shared.pool, self.pins, *a, &mut scratch)?),
                });
            }
            ctx.checks.check_values(table, &vals).map_err(|e| e.with_context(row.line_context()))?;
        }
        if b.len() > ctx.threshold {
            if let (Some(tb), Some(trel)) = (self.toast_bulk.as_mut(), table.toast_relfile) {
                toast::toast_row(b, ctx.threshold, tb, trel, ctx.xid, ctx.cid)?;
            }
        }
        let t = b.finish();
        if t.len() > ctx.max_size {
            return Err(PgError::new(
                sqlstate::PROGRAM_LIMIT_EXCEEDED,
                format!("row is too big: size {}, maximum size {}", t.len(), ctx.max_size),
            )
            .with_context(row.line_context()));
        }
        self.batch.extend_from_slice(t);
        self.lens.push(t.len());
        Ok(self.batch.len() >= BATCH_BYTES)
    }

    /// Inserts the batch into the heap (it stays in `batch` / `lens` for the indexes).
    pub(super) fn flush(&mut self) -> Result<()> {
        if self.lens.is_empty() {
            return Ok(());
        }
        self.bulk.insert_batch(&mut self.batch, &self.lens, self.ctx.xid, self.ctx.cid)
    }

    /// Forgets the batch (inserted, or abandoned after an error).
    pub(super) fn clear(&mut self) {
        self.batch.clear();
        self.lens.clear();
        if let Some(p) = self.bulk.placed.as_mut() {
            p.clear();
        }
    }

    /// Ends the bulk inserts (unused pages extended ahead go to the FSM).
    pub(super) fn finish(self) -> Result<()> {
        self.bulk.finish()?;
        if let Some(tb) = self.toast_bulk {
            tb.finish()?;
        }
        Ok(())
    }
}

/// CPU seconds used so far by the worker threads of parallel COPYs that have ended.
pub fn copy_worker_cpu_seconds() -> f64 {
    super::parallel::worker_cpu_seconds()
}

/// Loads rows into `table`; returns how many. `parallel` > 1 asks for that many worker
/// threads (see `copy::parallel`).
pub fn copy_from(s: &mut Session, table: &Table, cols: &[usize], opts: CopyOptions, src: &mut dyn Read, parallel: usize) -> Result<u64> {
    let shared = s.shared.clone();
    let names: Vec<String> = cols.iter().map(|&c| table.columns[c].name.clone()).collect();
    // DEFAULTs of the columns the field list leaves out: constants once, `nextval` per row.
    let defaults = crate::exec::rows::Defaults::new(s, table, |c| !cols.contains(&c))?;
    let mut fills = Vec::with_capacity(table.columns.len());
    for c in 0..table.columns.len() {
        fills.push(if cols.contains(&c) || !defaults.has(c) {
            DefaultFill::Null
        } else if defaults.is_volatile(c) {
            DefaultFill::PerRow
        } else {
            defaults.stored(s, table, c)?.map_or(DefaultFill::Null, DefaultFill::Stored)
        });
    }
    let per_row = fills.contains(&DefaultFill::PerRow);
    // Foreign keys: the keys the new rows reference are collected as they are written and
    // checked at the end (`exec::fk`); such a COPY runs serially.
    let mut fk = crate::exec::fk::Tracker::new(s, &std::sync::Arc::new(table.clone()))?.filter(|t| t.references());
    let checks = crate::exec::rows::Checks::new(table)?;
    let ctx = LoadCtx::new(s, &shared, table, cols, fills, checks);
    let rdr = CopyReader::new(src, opts, &table.name, &names);
    if parallel > 1 && !per_row && fk.is_none() {
        if let Some(workers) = super::parallel::Workers::reserve(&shared, parallel) {
            return super::parallel::copy_from(&ctx, rdr, &names, s.locks.get_mut(), workers);
        }
    }
    let n = {
        let session: &Session = s;
        let fill = |c: usize| defaults.stored(session, table, c);
        let mut locks = session.locks.borrow_mut();
        let per_row = per_row.then_some(&fill as &dyn Fn(usize) -> Result<Option<Vec<u8>>>);
        copy_from_serial(&ctx, rdr, &session.pins, &mut locks, per_row, fk.as_mut())?
    };
    drop(ctx);
    if let Some(fk) = fk {
        fk.finish(s)?;
    }
    Ok(n)
}

fn copy_from_serial(
    ctx: &LoadCtx<'_>,
    mut rdr: CopyReader<&mut dyn Read>,
    pins: &Pins,
    locks: &mut crate::lock::SessionLocks,
    per_row: Option<&dyn Fn(usize) -> Result<Option<Vec<u8>>>>,
    mut fk: Option<&mut crate::exec::fk::Tracker>,
) -> Result<u64> {
    let shared = ctx.shared;
    let mut indexes = crate::exec::rows::Maintainer { shared, pins, locks, me: ctx.xid, wal: ctx.index_wal, key: Vec::new(), preds: None };
    let mut ld = RowLoader::new(ctx, pins);
    ld.per_row = per_row;
    let mut n = 0u64;
    let mut chunk = 0usize;
    while let Some(row) = rdr.next_row()? {
        chunk += row.size();
        let full = ld.add(row)?;
        n += 1;
        let cut = chunk >= ctx.chunk_bytes;
        if full || cut {
            if cut {
                chunk = 0;
                crate::interrupt::check_for_interrupts()?;
            }
            ld.flush()?;
            index_batch(&mut indexes, &ld.bulk, ctx.table, &ld.batch, &ld.lens)?;
            if let Some(fk) = fk.as_deref_mut() {
                fk.inserted_tuples(&shared.pool, pins, &ld.batch, &ld.lens)?;
            }
            ld.clear();
        }
    }
    ld.flush()?;
    index_batch(&mut indexes, &ld.bulk, ctx.table, &ld.batch, &ld.lens)?;
    if let Some(fk) = fk {
        fk.inserted_tuples(&shared.pool, pins, &ld.batch, &ld.lens)?;
    }
    ld.clear();
    ld.finish()?;
    Ok(n)
}

/// Adds the index entries of the batch just inserted (its TIDs collected by the bulk insert).
pub(super) fn index_batch(
    m: &mut crate::exec::rows::Maintainer<'_>,
    bulk: &BulkInsert<'_>,
    table: &Table,
    batch: &[u8],
    lens: &[usize],
) -> Result<()> {
    let Some(placed) = bulk.placed.as_ref() else { return Ok(()) };
    index_tuples(m, table, batch, lens, placed)
}

/// Adds the index entries of heap tuples `batch` (lengths `lens`) placed at `placed`.
pub(super) fn index_tuples(
    m: &mut crate::exec::rows::Maintainer<'_>,
    table: &Table,
    batch: &[u8],
    lens: &[usize],
    placed: &[(crate::storage::BlockNumber, u16)],
) -> Result<()> {
    debug_assert_eq!(placed.len(), lens.len());
    let mut pos = 0;
    for (&len, &tid) in lens.iter().zip(placed.iter()) {
        m.insert_tuple(table, &batch[pos..pos + len], tid)?;
        pos += len;
    }
    Ok(())
}

/// "Failing row contains (...)." with each value in output form, clipped at 64 bytes.
pub(crate) fn failing_row(b: &mut tuple::TupleBuilder, types: &[SqlType], pool: &BufferPool, pins: &Pins) -> String {
    let t = b.finish().to_vec();
    let mut attrs = Vec::new();
    if tuple::deform(&t, types, &mut attrs).is_err() {
        return "Failing row cannot be shown.".into();
    }
    let mut parts = Vec::with_capacity(types.len());
    let mut scratch = Vec::new();
    for (i, a) in attrs.iter().enumerate() {
        match a {
            None => parts.push("null".to_string()),
            Some(a) => {
                let mut out = Vec::new();
                match attr_bytes(pool, pins, *a, &mut scratch) {
                    Ok(v) => types[i].output_text(v, &mut out),
                    Err(_) => out.extend_from_slice(b"?"),
                }
                let s = String::from_utf8_lossy(&out).into_owned();
                parts.push(clip(&s, MAX_FIELD_DISPLAY_BYTES));
            }
        }
    }
    format!("Failing row contains ({}).", parts.join(", "))
}

fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

pub use crate::access::heap::toast::attr_bytes;

/// Writes the visible rows of `table`; returns how many.
/// Writes the rows to `dst`; `framed` (COPY TO STDOUT): each row in one `write_all` call (see
/// [`crate::session::CopyIo`]), else through a large buffer.
pub fn copy_to(s: &mut Session, table: &Table, cols: &[usize], opts: CopyOptions, dst: &mut dyn Write, framed: bool) -> Result<u64> {
    let snap = s.snapshot();
    let shared = s.shared.clone();
    let pool = &shared.pool;
    let pins = &s.pins;
    let binary = opts.format == CopyFormat::Binary;
    let names: Vec<String> = cols.iter().map(|&c| table.columns[c].name.clone()).collect();
    let types: Vec<SqlType> = table.columns.iter().map(|c| c.ty).collect();
    let werr = |e: std::io::Error| PgError::new(sqlstate::IO_ERROR, format!("could not write COPY data: {}", os_msg(&e)));
    let inner: Box<dyn Write + '_> = if framed { Box::new(dst) } else { Box::new(std::io::BufWriter::with_capacity(256 << 10, dst)) };
    let mut w = CopyWriter::new(inner, opts);
    if framed {
        w = w.framed();
    }
    w.begin(&names).map_err(werr)?;
    let mut n = 0u64;
    let mut line: Vec<u8> = Vec::with_capacity(4096);
    let mut spans: Vec<Option<(usize, usize)>> = Vec::with_capacity(cols.len());
    let mut scratch = Vec::new();
    heap::scan(pool, pins, &shared.txns, table.relfile, &snap, |block, off, t| {
        let mut attrs = Vec::with_capacity(types.len());
        tuple::deform(t, &types, &mut attrs).map_err(|_| heap::corrupt_tuple(pool, table.relfile, block, off))?;
        line.clear();
        spans.clear();
        for &c in cols {
            match attrs[c] {
                None => spans.push(None),
                Some(a) => {
                    let v = attr_bytes(pool, pins, a, &mut scratch)?;
                    let start = line.len();
                    if binary {
                        types[c].send_binary(v, &mut line);
                    } else {
                        types[c].output_text(v, &mut line);
                    }
                    spans.push(Some((start, line.len())));
                }
            }
        }
        let fields: Vec<Option<&[u8]>> = spans.iter().map(|sp| sp.map(|(a, b)| &line[a..b])).collect();
        w.write_row(&fields).map_err(werr)?;
        n += 1;
        Ok(Flow::Continue)
    })?;
    let mut inner = w.finish().map_err(werr)?;
    inner.flush().map_err(werr)?;
    Ok(n)
}

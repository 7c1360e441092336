//! The typed Rust API, as rusqlite's: parameters through [`ToSql`], rows read with
//! [`Row::get`] into Rust types through [`FromSql`], SQL NULL as `Option<T>`.
//!
//! ```
//! use heapstore::{Database, Row};
//! let dir = tempfile::tempdir().unwrap();
//! let data = dir.path().join("data");
//! Database::init(&data, &[]).unwrap();
//! let db = Database::open(&data, &[]).unwrap();
//! let mut s = db.session();
//! s.execute("CREATE TABLE emp (id integer PRIMARY KEY, name text, salary numeric(10,2))").unwrap();
//! // COPY in and out.
//! let mut csv: &[u8] = b"1,ann,5000.50\n2,bob,\n";
//! s.execute_with_io("COPY emp FROM STDIN WITH (FORMAT csv)", &mut heapstore::sql::CopyIo { stdin: Some(&mut csv), stdout: None, rows: None }).unwrap();
//! let mut out = Vec::new();
//! s.execute_with_io("COPY emp TO STDOUT", &mut heapstore::sql::CopyIo { stdin: None, stdout: Some(&mut out), rows: None }).unwrap();
//! assert_eq!(out, b"1\tann\t5000.50\n2\tbob\t\\N\n");
//! // A transaction with typed parameters.
//! s.execute("BEGIN").unwrap();
//! s.query("INSERT INTO emp VALUES ($1, $2, $3)", &[&3i32, &"cy", &None::<f64>]).unwrap();
//! s.execute("COMMIT").unwrap();
//! // Typed rows; NULL as None.
//! let rows = s.query("SELECT id, name, salary::text FROM emp WHERE id >= $1 ORDER BY id", &[&2i64]).unwrap();
//! let got: Vec<(i32, String, Option<String>)> =
//!     rows.iter().map(|r: &Row| (r.get(0).unwrap(), r.get(1).unwrap(), r.get(2).unwrap())).collect();
//! assert_eq!(got, vec![(2, "bob".to_string(), None), (3, "cy".to_string(), None)]);
//! // Streaming, in constant memory.
//! let mut total = 0i64;
//! s.query_for_each("SELECT id FROM emp", &[], |r| { total += r.get::<i64>(0)?; Ok(()) }).unwrap();
//! assert_eq!(total, 6);
//! drop(s);
//! db.close().unwrap();
//! ```
//!
//! Invariant: a value is converted only between a column's type and the Rust types that hold
//! it exactly (integers widen, never narrow; floats from floats; text from text types); any
//! other conversion is an error (42804), and NULL into a non-`Option` is 22004.

use crate::error::{sqlstate, PgError, Result};
use crate::types::{Numeric, SqlType, Value};
use std::sync::Arc;

/// A Rust value usable as a statement parameter (sent in its text form, read with the type the
/// statement's context gives the parameter, as PostgreSQL does).
pub trait ToSql {
    /// The text form; None for NULL.
    fn to_sql(&self) -> Option<String>;
}

macro_rules! to_sql_display {
    ($($t:ty),*) => {$(
        impl ToSql for $t {
            fn to_sql(&self) -> Option<String> {
                Some(self.to_string())
            }
        }
    )*};
}
to_sql_display!(i16, i32, i64, bool, String, &str, Numeric);

impl ToSql for f32 {
    fn to_sql(&self) -> Option<String> {
        let mut out = Vec::new();
        crate::types::SqlType::new(crate::types::TypeId::Float4).output_text(&self.to_bits().to_le_bytes(), &mut out);
        Some(String::from_utf8_lossy(&out).into_owned())
    }
}

impl ToSql for f64 {
    fn to_sql(&self) -> Option<String> {
        let mut out = Vec::new();
        crate::types::SqlType::new(crate::types::TypeId::Float8).output_text(&self.to_bits().to_le_bytes(), &mut out);
        Some(String::from_utf8_lossy(&out).into_owned())
    }
}

impl ToSql for Vec<u8> {
    fn to_sql(&self) -> Option<String> {
        let mut out = Vec::new();
        crate::types::SqlType::new(crate::types::TypeId::Bytea).output_text(self, &mut out);
        Some(String::from_utf8_lossy(&out).into_owned())
    }
}

impl<T: ToSql> ToSql for Option<T> {
    fn to_sql(&self) -> Option<String> {
        self.as_ref().and_then(|v| v.to_sql())
    }
}

/// A Rust type a column's value can be read into.
pub trait FromSql: Sized {
    /// Converts `v` (of the column's type `ty`); NULL is an error unless `Self` is an Option.
    fn from_sql(v: &Value, ty: &SqlType) -> Result<Self>;
}

fn wrong(ty: &SqlType, want: &str) -> PgError {
    PgError::new(sqlstate::DATATYPE_MISMATCH, format!("cannot read a value of type {} as {want}", ty.name()))
}

fn not_null(v: &Value, want: &str) -> Result<()> {
    if *v == Value::Null {
        return Err(PgError::new("22004", format!("null value read as {want} (use Option<{want}>)")));
    }
    Ok(())
}

macro_rules! from_sql_int {
    ($t:ty, $name:literal, $($variant:ident),*) => {
        impl FromSql for $t {
            fn from_sql(v: &Value, ty: &SqlType) -> Result<Self> {
                not_null(v, $name)?;
                match *v {
                    $(Value::$variant(x) => Ok(<$t>::from(x)),)*
                    _ => Err(wrong(ty, $name)),
                }
            }
        }
    };
}
from_sql_int!(i16, "i16", Int2);
from_sql_int!(i32, "i32", Int2, Int4);
from_sql_int!(i64, "i64", Int2, Int4, Int8);
from_sql_int!(f64, "f64", Float4, Float8);
from_sql_int!(bool, "bool", Bool);

impl FromSql for f32 {
    fn from_sql(v: &Value, ty: &SqlType) -> Result<Self> {
        not_null(v, "f32")?;
        match *v {
            Value::Float4(x) => Ok(x),
            _ => Err(wrong(ty, "f32")),
        }
    }
}

impl FromSql for String {
    fn from_sql(v: &Value, ty: &SqlType) -> Result<Self> {
        not_null(v, "String")?;
        match v {
            Value::Text(s) => Ok(s.clone()),
            _ => Err(wrong(ty, "String")),
        }
    }
}

impl FromSql for Vec<u8> {
    fn from_sql(v: &Value, ty: &SqlType) -> Result<Self> {
        not_null(v, "Vec<u8>")?;
        match v {
            Value::Bytea(b) => Ok(b.clone()),
            _ => Err(wrong(ty, "Vec<u8>")),
        }
    }
}

impl FromSql for Numeric {
    fn from_sql(v: &Value, ty: &SqlType) -> Result<Self> {
        not_null(v, "Numeric")?;
        match v {
            Value::Numeric(n) => Ok(n.clone()),
            Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => Ok(Numeric::from_i64(crate::sql::expr::as_i64(v).unwrap_or(0))),
            _ => Err(wrong(ty, "Numeric")),
        }
    }
}

impl<T: FromSql> FromSql for Option<T> {
    fn from_sql(v: &Value, ty: &SqlType) -> Result<Self> {
        if *v == Value::Null {
            return Ok(None);
        }
        T::from_sql(v, ty).map(Some)
    }
}

/// One row of a query's result.
#[derive(Clone, Debug)]
pub struct Row {
    values: Vec<Value>,
    columns: Arc<Vec<(String, SqlType)>>,
}

impl Row {
    /// Column `i` (0-based) as `T`.
    pub fn get<T: FromSql>(&self, i: usize) -> Result<T> {
        let v = self.values.get(i).ok_or_else(|| {
            PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("column index {i} out of range: the row has {} columns", self.values.len()),
            )
        })?;
        T::from_sql(v, &self.columns[i].1)
    }

    /// The value of column `i`, as decoded.
    pub fn value(&self, i: usize) -> Option<&Value> {
        self.values.get(i)
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The columns' names and types.
    pub fn columns(&self) -> &[(String, SqlType)] {
        &self.columns
    }
}

impl crate::Session {
    /// Runs one statement with typed parameters (`$1`, `$2`, ...) and returns the rows of a
    /// query (none for other statements), as one statement of its own implicit transaction
    /// unless a block is open.
    pub fn query(&mut self, sql: &str, params: &[&dyn ToSql]) -> Result<Vec<Row>> {
        let mut rows = Vec::new();
        self.query_for_each(sql, params, |r| {
            rows.push(r.clone());
            Ok(())
        })?;
        Ok(rows)
    }

    /// As [`Session::query`], calling `f` on each row as it is produced (constant memory for
    /// plans that stream); returns the number of rows.
    pub fn query_for_each(&mut self, sql: &str, params: &[&dyn ToSql], mut f: impl FnMut(&Row) -> Result<()>) -> Result<u64> {
        let p = crate::sql::prepare(sql)?;
        crate::types::tz::set_session(self.time_zone());
        crate::types::tz::set_transaction_start(self.transaction_start_us());
        let text: Vec<Option<String>> = params.iter().map(|p| p.to_sql()).collect();
        let mut columns: Option<Arc<Vec<(String, SqlType)>>> = None;
        crate::sql::run_query_values(self, &p, &text, &mut |cols, values| {
            let cols = columns.get_or_insert_with(|| Arc::new(cols.to_vec())).clone();
            f(&Row { values: values.to_vec(), columns: cols })
        })
    }
}

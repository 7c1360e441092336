//! SQL data types: PostgreSQL 15's exact text and binary I/O for the 13 types heapstore
//! stores (boolean, smallint, integer, bigint, real, double precision, numeric(p,s), text,
//! varchar(n), char(n), bytea, date, timestamp).
//!
//! This module owns three representations of a value and the conversions between them:
//!
//! * the **text** form (COPY text/CSV, SQL literals, query output), byte-for-byte what
//!   PostgreSQL's `*in`/`*out` functions accept and produce with the default settings
//!   (`DateStyle = 'ISO, MDY'`, `extra_float_digits = 1`, `bytea_output = 'hex'`, UTF-8,
//!   session time zone UTC; a timestamptz's text is in the session's zone, `tz`);
//! * the **binary** form (COPY BINARY, wire protocol), PostgreSQL's `*send`/`*recv`;
//! * the **storage** form kept in heap tuples.
//!
//! Storage invariants (what every `input_text`/`recv_binary` guarantees and every
//! `output_text`/`send_binary`/[`Value::decode`] relies on):
//!
//! * fixed-width types are little-endian: bool one byte 0/1; int2/int4/int8; float4/float8
//!   as their IEEE bit patterns (-0 and NaN payloads preserved); date `i32` days since
//!   2000-01-01; timestamp `i64` microseconds since 2000-01-01 00:00:00; the `MIN`/`MAX` of
//!   date and timestamp mean -infinity/infinity, and finite values are in PostgreSQL's range
//!   (4714-11-24 BC up to 5874897-12-31 and 294276-12-31 23:59:59.999999; like PostgreSQL,
//!   rounding to a timestamp(p) precision may step just past the upper end);
//! * text, varchar and char are valid UTF-8 without NUL bytes; char(n) is blank-padded to
//!   exactly n characters, varchar(n) has at most n characters;
//! * bytea is the raw bytes;
//! * numeric is [`Numeric`]'s storage form (its module documentation has the layout): a
//!   little-endian `u16` header (sign, dscale) and `i16` weight, then normalized base-10000
//!   digits, or the header alone for NaN and the infinities; stored values obey the column's
//!   `numeric(p,s)` (rounded to s places, fewer than p − s digits before the point).
//!
//! `input_text` appends to its output and never clears it; on error the output may hold a
//! partial value, which the caller discards. Text input of fixed-width types does not
//! allocate unless it fails.
//!
//! Errors carry PostgreSQL's SQLSTATE and message text (and hint, where PostgreSQL gives
//! one); the caller adds the CONTEXT (COPY line and column).
//!
//! Layout: `int` (boolean, integers), `float` with `strtod` (glibc-compatible parsing) and
//! `ryu`/`ryu_tables` (PostgreSQL's shortest output), `numeric` (exact decimal arithmetic
//! and I/O), `text` (text, varchar, char), `bytea`,
//! `datetime` (date and timestamp I/O) with the general date/time decoder in `dt_lex`
//! (`ParseDateTime`), `dt_parse` (`DecodeDateTime`), `dt_fields` and `dt_tokens`, and
//! `util`. Not supported: zone names and POSIX zone specs inside date/timestamp input
//! (`2000-01-01 12:00 Europe/Berlin`), which PostgreSQL validates against its zone
//! database and then ignores; they are rejected here. Zone abbreviations (`EST`, `UTC`,
//! `Z`) and numeric offsets are accepted and ignored, as in PostgreSQL.

pub mod array;
pub(crate) mod bytea;
pub(crate) mod datetime;
mod dt_fields;
mod dt_lex;
mod dt_parse;
mod dt_tokens;
mod float;
pub(crate) mod int;
pub mod interval;
pub mod json;
pub mod jsonb;
mod numeric;
pub mod record;
mod ryu;
mod ryu_tables;
mod strtod;
pub(crate) mod text;
pub mod time;
pub mod tz;
pub(crate) mod util;
pub mod uuid;
pub use interval::Interval;
pub use time::TimeTz;

#[cfg(test)]
mod tests;

use crate::error::{sqlstate, PgError, Result};
pub use array::{Array, ArrayElem, Dim};
pub use numeric::Numeric;
pub use record::{Record, RecordKind};
use util::{push_i64, stored, wire_exact};

/// The supported SQL types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TypeId {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Numeric,
    Text,
    Varchar,
    Bpchar,
    Bytea,
    Date,
    Timestamp,
    /// timestamp with time zone: microseconds since 2000-01-01 00:00:00 UTC.
    Timestamptz,
    /// oid: an unsigned 32-bit object identifier (the catalog's keys).
    Oid,
    /// name: an identifier of at most 63 bytes (the catalog's names).
    Name,
    /// "char": one ASCII byte, or none (the catalog's kind codes).
    Char,
    /// regtype: a type OID that prints as the type's name.
    Regtype,
    /// regnamespace: a namespace OID that prints as the schema's name (heapstore's schemas
    /// are fixed: pg_catalog, public, pg_toast, information_schema).
    Regnamespace,
    /// regclass: a relation OID that prints as the relation's name. Its text input needs the
    /// catalog, so only the SQL layer makes these (casts of constants, `to_regclass`); it is
    /// not a column type.
    Regclass,
    /// pg_node_tree: an expression tree in the catalogs (text out; never accepted as input,
    /// as in PostgreSQL). heapstore's catalogs hold none, so its values are NULL.
    PgNodeTree,
    /// An array type heapstore does not have (`aclitem[]`; the type modifier holds its
    /// PostgreSQL OID). Only NULL values of it exist: catalog columns whose true value is
    /// NULL (default privileges). Any input is refused.
    NullArray,
    /// An array of the element type (`integer[]`); the modifier is the element's.
    Array(ArrayElem),
    /// int2vector: a one-dimensional smallint array with subscripts from 0 (`pg_index.indkey`).
    Int2Vector,
    /// oidvector: a one-dimensional oid array with subscripts from 0 (`pg_index.indclass`).
    OidVector,
    /// A composite value a function returns (PostgreSQL's `record`); never a column type.
    Record(RecordKind),
    /// json: valid JSON text, kept as written (`json`).
    Json,
    /// uuid: 16 bytes (`uuid`).
    Uuid,
    /// jsonb: JSON as a value, stored as its canonical text (`types::jsonb`).
    Jsonb,
    /// interval: months, days and microseconds (`types::interval`).
    Interval,
    /// void: what a function with no result returns (`pg_sleep`); a pseudo-type, never a
    /// column type. Its one value prints as the empty string and is sent as zero bytes.
    Void,
    /// time [without time zone]: microseconds since midnight (`types::time`).
    Time,
    /// time with time zone: a time and its zone (`types::time`).
    TimeTz,
}

/// A type with its modifier: the maximum length in characters for varchar/char, the
/// fractional-second precision (0..=6) for timestamp, PostgreSQL's encoding
/// `((precision << 16) | (scale & 0x7ff)) + 4` for numeric(p,s), `-1` for none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct SqlType {
    pub id: TypeId,
    pub typmod: i32,
}

/// `MaxAttrSize`: the largest length accepted for varchar(n) and char(n).
const MAX_CHAR_LENGTH: i64 = 10 * 1024 * 1024;

impl SqlType {
    /// The element type of an array or vector type (with the array's modifier), else None.
    pub fn elem(&self) -> Option<SqlType> {
        match self.id {
            TypeId::Array(e) => Some(SqlType::with_typmod(e.id(), self.typmod)),
            TypeId::Int2Vector => Some(SqlType::new(TypeId::Int2)),
            TypeId::OidVector => Some(SqlType::new(TypeId::Oid)),
            _ => None,
        }
    }

    /// The array type of this element type (`integer` → `integer[]`), if heapstore has it.
    /// An array type's array is itself (PostgreSQL's arrays of arrays are multidimensional
    /// arrays of the same type).
    pub fn array_of(&self) -> Option<SqlType> {
        match self.id {
            TypeId::Array(_) => Some(*self),
            TypeId::Int2Vector => Some(SqlType::new(TypeId::Array(ArrayElem::Int2))),
            TypeId::OidVector => Some(SqlType::new(TypeId::Array(ArrayElem::Oid))),
            id => ArrayElem::of(id).map(|e| SqlType::with_typmod(TypeId::Array(e), self.typmod)),
        }
    }

    /// True for the array types and the vectors.
    pub fn is_array(&self) -> bool {
        matches!(self.id, TypeId::Array(_) | TypeId::Int2Vector | TypeId::OidVector)
    }

    /// int2vector or oidvector (subscripts from 0, written with spaces).
    pub fn is_vector(&self) -> bool {
        matches!(self.id, TypeId::Int2Vector | TypeId::OidVector)
    }

    /// A type without modifier.
    pub const fn new(id: TypeId) -> Self {
        SqlType { id, typmod: -1 }
    }

    /// A type with modifier `n` (see [`SqlType::typmod`]).
    pub const fn with_typmod(id: TypeId, n: i32) -> Self {
        SqlType { id, typmod: n }
    }

    /// Resolves a type name as written in SQL (case-insensitive, spaces collapsed), with the
    /// numbers given in parentheses: `varchar(16)` is `("varchar", &[16])`. `char` without a
    /// length is char(1); `bpchar` without one is unlimited; `float(p)` is real for p <= 24
    /// and double precision up to 53; `timestamp(p)` keeps p fractional digits (p > 6 is
    /// reduced to 6, as PostgreSQL does with a warning); `numeric(p)` is numeric(p,0), and
    /// numeric(p,s) takes p in 1..=1000 and s in -1000..=1000 (PostgreSQL 15's checks).
    pub fn from_name(name: &str, typmod_args: &[i64]) -> Result<SqlType> {
        let lower = name.to_ascii_lowercase();
        // `integer[]` and the catalog names of array types (`_int4`).
        if let Some(elem) = lower.trim_end().strip_suffix("[]") {
            let e = SqlType::from_name(elem, typmod_args)?;
            return e
                .array_of()
                .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("could not find array type for data type {}", e.name())));
        }
        if let Some(e) = lower.strip_prefix('_').and_then(|n| ArrayElem::all().find(|e| &e.typname()[1..] == n)) {
            if !typmod_args.is_empty() {
                return Err(PgError::syntax(format!("type modifier is not allowed for type \"{lower}\"")));
            }
            return Ok(SqlType::new(TypeId::Array(e)));
        }
        let norm: Vec<&str> = lower.split_whitespace().collect();
        let norm = norm.join(" ");
        let id = match norm.as_str() {
            "bool" | "boolean" => TypeId::Bool,
            "int2" | "smallint" => TypeId::Int2,
            "int" | "int4" | "integer" => TypeId::Int4,
            "int8" | "bigint" => TypeId::Int8,
            "real" | "float4" => TypeId::Float4,
            "double precision" | "float8" => TypeId::Float8,
            "float" => return float_with_precision(typmod_args),
            "numeric" | "decimal" | "dec" => {
                return match typmod_args {
                    [] => Ok(SqlType::new(TypeId::Numeric)),
                    args => Ok(SqlType::with_typmod(TypeId::Numeric, numeric::typmod_from_args(args)?)),
                }
            }
            "text" => TypeId::Text,
            "varchar" | "character varying" | "char varying" => return char_type(TypeId::Varchar, "varchar", typmod_args, -1),
            "char" | "character" => return char_type(TypeId::Bpchar, "char", typmod_args, 1),
            "bpchar" => return char_type(TypeId::Bpchar, "char", typmod_args, -1),
            "bytea" => TypeId::Bytea,
            "date" => TypeId::Date,
            "timestamp" | "timestamp without time zone" => return timestamp_type(TypeId::Timestamp, typmod_args),
            "timestamptz" | "timestamp with time zone" => return timestamp_type(TypeId::Timestamptz, typmod_args),
            "time" | "time without time zone" => return timestamp_type(TypeId::Time, typmod_args),
            "timetz" | "time with time zone" => return timestamp_type(TypeId::TimeTz, typmod_args),
            "oid" => TypeId::Oid,
            "name" => TypeId::Name,
            "\"char\"" => TypeId::Char,
            "regtype" => TypeId::Regtype,
            "regnamespace" => TypeId::Regnamespace,
            "regclass" => TypeId::Regclass,
            "pg_node_tree" => TypeId::PgNodeTree,
            "int2vector" => TypeId::Int2Vector,
            "json" => TypeId::Json,
            "uuid" => TypeId::Uuid,
            "jsonb" => TypeId::Jsonb,
            "void" => TypeId::Void,
            "interval" if typmod_args.is_empty() => TypeId::Interval,
            "interval" => return Err(PgError::feature("interval precision (interval(p)) is not supported by heapstore yet")),
            n if n.starts_with("interval ") => {
                return Err(PgError::feature(format!("interval fields ({n}) are not supported by heapstore yet")))
            }
            "oidvector" => TypeId::OidVector,
            n => {
                // A PostgreSQL type heapstore does not have is not supported, not missing.
                if let Some(pg) = postgres_only_type(n) {
                    return Err(PgError::feature(format!("type {pg} is not supported by heapstore")));
                }
                return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("type \"{norm}\" does not exist")));
            }
        };
        let ty = SqlType::new(id);
        if !typmod_args.is_empty() {
            return Err(PgError::syntax(format!("type modifier is not allowed for type \"{}\"", ty.internal_name())));
        }
        Ok(ty)
    }

    /// PostgreSQL's `format_type`: `integer`, `character varying(16)`, `character(12)`,
    /// `timestamp without time zone`, `bpchar` (char without length limit), ...
    pub fn name(&self) -> String {
        let n = self.typmod;
        match self.id {
            TypeId::Varchar if n >= 0 => format!("character varying({n})"),
            TypeId::Varchar => "character varying".to_string(),
            TypeId::Bpchar if n >= 0 => format!("character({n})"),
            TypeId::Bpchar => "bpchar".to_string(),
            TypeId::Timestamp if n >= 0 => format!("timestamp({n}) without time zone"),
            TypeId::Timestamp => "timestamp without time zone".to_string(),
            TypeId::Timestamptz if n >= 0 => format!("timestamp({n}) with time zone"),
            TypeId::Timestamptz => "timestamp with time zone".to_string(),
            TypeId::Time if n >= 0 => format!("time({n}) without time zone"),
            TypeId::TimeTz if n >= 0 => format!("time({n}) with time zone"),
            TypeId::NullArray => null_array_name(n as u32).to_string(),
            TypeId::Array(e) => {
                let elem = SqlType::with_typmod(e.id(), n);
                // format_type: char without a length is "bpchar" inside an array too.
                format!("{}[]", elem.name())
            }
            TypeId::Record(_) => "record".to_string(),
            TypeId::Void => "void".to_string(),
            TypeId::Numeric if n >= 4 => format!("numeric({},{})", numeric::typmod_precision(n), numeric::typmod_scale(n)),
            _ => self.input_name().to_string(),
        }
    }

    /// The name PostgreSQL uses in input error messages ("invalid input syntax for type
    /// integer"): integer, smallint, bigint, boolean, real, double precision, numeric,
    /// date, timestamp, bytea, text, character varying, character.
    pub fn input_name(&self) -> &'static str {
        match self.id {
            TypeId::Bool => "boolean",
            TypeId::Int2 => "smallint",
            TypeId::Int4 => "integer",
            TypeId::Int8 => "bigint",
            TypeId::Float4 => "real",
            TypeId::Float8 => "double precision",
            TypeId::Numeric => "numeric",
            TypeId::Text => "text",
            TypeId::Varchar => "character varying",
            TypeId::Bpchar => "character",
            TypeId::Bytea => "bytea",
            TypeId::Date => "date",
            TypeId::Timestamp => "timestamp",
            TypeId::Timestamptz => "timestamp with time zone",
            TypeId::Oid => "oid",
            TypeId::Name => "name",
            TypeId::Char => "\"char\"",
            TypeId::Regtype => "regtype",
            TypeId::Regnamespace => "regnamespace",
            TypeId::Regclass => "regclass",
            TypeId::PgNodeTree => "pg_node_tree",
            TypeId::NullArray | TypeId::Array(_) => "array",
            TypeId::Int2Vector => "int2vector",
            TypeId::OidVector => "oidvector",
            TypeId::Record(_) => "record",
            TypeId::Void => "void",
            TypeId::Json => "json",
            TypeId::Jsonb => "jsonb",
            TypeId::Uuid => "uuid",
            TypeId::Interval => "interval",
            TypeId::Time => "time without time zone",
            TypeId::TimeTz => "time with time zone",
        }
    }

    /// The catalog name (`pg_type.typname`), used in a few PostgreSQL messages.
    pub(crate) fn internal_name(&self) -> &'static str {
        match self.id {
            TypeId::Bool => "bool",
            TypeId::Int2 => "int2",
            TypeId::Int4 => "int4",
            TypeId::Int8 => "int8",
            TypeId::Float4 => "float4",
            TypeId::Float8 => "float8",
            TypeId::Numeric => "numeric",
            TypeId::Text => "text",
            TypeId::Varchar => "varchar",
            TypeId::Bpchar => "bpchar",
            TypeId::Bytea => "bytea",
            TypeId::Date => "date",
            TypeId::Timestamp => "timestamp",
            TypeId::Timestamptz => "timestamptz",
            TypeId::Oid => "oid",
            TypeId::Name => "name",
            TypeId::Char => "char",
            TypeId::Regtype => "regtype",
            TypeId::Regnamespace => "regnamespace",
            TypeId::Regclass => "regclass",
            TypeId::PgNodeTree => "pg_node_tree",
            TypeId::NullArray => "array",
            TypeId::Array(e) => e.typname(),
            TypeId::Int2Vector => "int2vector",
            TypeId::OidVector => "oidvector",
            TypeId::Record(_) => "record",
            TypeId::Void => "void",
            TypeId::Json => "json",
            TypeId::Jsonb => "jsonb",
            TypeId::Uuid => "uuid",
            TypeId::Interval => "interval",
            TypeId::Time => "time",
            TypeId::TimeTz => "timetz",
        }
    }

    /// PostgreSQL's type OID.
    pub fn pg_oid(&self) -> u32 {
        match self.id {
            TypeId::Bool => 16,
            TypeId::Int2 => 21,
            TypeId::Int4 => 23,
            TypeId::Int8 => 20,
            TypeId::Float4 => 700,
            TypeId::Float8 => 701,
            TypeId::Numeric => 1700,
            TypeId::Text => 25,
            TypeId::Varchar => 1043,
            TypeId::Bpchar => 1042,
            TypeId::Bytea => 17,
            TypeId::Date => 1082,
            TypeId::Timestamp => 1114,
            TypeId::Timestamptz => 1184,
            TypeId::Oid => 26,
            TypeId::Name => 19,
            TypeId::Char => 18,
            TypeId::Regtype => 2206,
            TypeId::Regnamespace => 4089,
            TypeId::Regclass => 2205,
            TypeId::PgNodeTree => 194,
            TypeId::NullArray => self.typmod.max(0) as u32,
            TypeId::Array(e) => e.array_oid(),
            TypeId::Int2Vector => 22,
            TypeId::OidVector => 30,
            TypeId::Record(_) => 2249,
            TypeId::Void => 2278,
            TypeId::Json => 114,
            TypeId::Uuid => 2950,
            TypeId::Jsonb => 3802,
            TypeId::Interval => 1186,
            TypeId::Time => 1083,
            TypeId::TimeTz => 1266,
        }
    }

    /// Storage size of fixed-width types; `None` for numeric, text, varchar, char and bytea.
    pub fn fixed_len(&self) -> Option<usize> {
        match self.id {
            TypeId::Bool => Some(1),
            TypeId::Int2 => Some(2),
            TypeId::Int4 | TypeId::Float4 | TypeId::Date | TypeId::Oid | TypeId::Regtype | TypeId::Regnamespace | TypeId::Regclass => {
                Some(4)
            }
            TypeId::Int8 | TypeId::Float8 | TypeId::Timestamp | TypeId::Timestamptz | TypeId::Time => Some(8),
            TypeId::TimeTz => Some(time::TIMETZ_LEN),
            TypeId::Uuid => Some(uuid::UUID_LEN),
            TypeId::Interval => Some(interval::INTERVAL_LEN),
            TypeId::Void => Some(0),
            TypeId::Numeric
            | TypeId::Text
            | TypeId::Varchar
            | TypeId::Bpchar
            | TypeId::Bytea
            | TypeId::Name
            | TypeId::Char
            | TypeId::PgNodeTree
            | TypeId::NullArray
            | TypeId::Array(_)
            | TypeId::Int2Vector
            | TypeId::OidVector
            | TypeId::Record(_)
            | TypeId::Json
            | TypeId::Jsonb => None,
        }
    }

    /// Parses PostgreSQL text input (`boolin`, `int4in`, `float8in`, `numeric_in`, ...),
    /// appending the storage form to `out` (never clearing it). Errors carry PostgreSQL's
    /// SQLSTATE and message. Fixed-width types do not allocate on success (COPY's hot path).
    pub fn input_text(&self, s: &str, out: &mut Vec<u8>) -> Result<()> {
        match self.id {
            TypeId::Bool => out.push(u8::from(int::parse_bool(s)?)),
            TypeId::Int2 => out.extend_from_slice(&int::parse_int2(s)?.to_le_bytes()),
            TypeId::Int4 => out.extend_from_slice(&int::parse_int4(s)?.to_le_bytes()),
            TypeId::Int8 => out.extend_from_slice(&int::parse_int8(s)?.to_le_bytes()),
            TypeId::Float4 => out.extend_from_slice(&float::parse_float4(s)?.to_bits().to_le_bytes()),
            TypeId::Float8 => out.extend_from_slice(&float::parse_float8(s)?.to_bits().to_le_bytes()),
            TypeId::Numeric => Numeric::parse_typmod(s, self.typmod)?.encode_stored(out),
            TypeId::Text => text::text_in(s.as_bytes(), out)?,
            TypeId::Varchar => text::varchar_in(s.as_bytes(), self.typmod, out)?,
            TypeId::Bpchar => text::bpchar_in(s.as_bytes(), self.typmod, out)?,
            TypeId::Bytea => bytea::bytea_in(s, out)?,
            TypeId::Date => out.extend_from_slice(&datetime::parse_date(s)?.to_le_bytes()),
            TypeId::Timestamp => {
                let t = datetime::parse_timestamp(s, self.typmod)?;
                out.extend_from_slice(&t.to_le_bytes());
            }
            TypeId::Timestamptz => {
                let t = datetime::parse_timestamptz(s, self.typmod)?;
                out.extend_from_slice(&t.to_le_bytes());
            }
            TypeId::Oid => out.extend_from_slice(&int::parse_oid(s)?.to_le_bytes()),
            TypeId::Name => text::name_in(s.as_bytes(), out)?,
            TypeId::Char => text::char_in(s.as_bytes(), out)?,
            TypeId::Regtype => out.extend_from_slice(&regtype_in(s)?.to_le_bytes()),
            TypeId::Regnamespace => out.extend_from_slice(&regnamespace_in(s)?.to_le_bytes()),
            TypeId::Regclass => return Err(regclass_needs_catalog()),
            TypeId::PgNodeTree => return Err(PgError::feature("cannot accept a value of type pg_node_tree")),
            TypeId::NullArray => return Err(PgError::feature(format!("arrays ({}) are not supported by heapstore", self.name()))),
            TypeId::Array(_) | TypeId::Int2Vector | TypeId::OidVector => array::parse_text(self, s)?.encode(out),
            TypeId::Record(_) => return Err(PgError::feature("input of anonymous composite types is not implemented")),
            // void_in: any input is the one value.
            TypeId::Void => {}
            TypeId::Json => {
                json::validate(s)?;
                text::text_in(s.as_bytes(), out)?;
            }
            TypeId::Uuid => out.extend_from_slice(&uuid::parse(s)?),
            TypeId::Jsonb => out.extend_from_slice(jsonb::parse(s)?.to_text().as_bytes()),
            TypeId::Interval => interval::parse(s)?.encode(out),
            TypeId::Time => out.extend_from_slice(&time::parse_time(s, self.typmod)?.to_le_bytes()),
            TypeId::TimeTz => time::parse_timetz(s, self.typmod)?.encode(out),
        }
        Ok(())
    }

    /// Appends PostgreSQL's text output for a stored value.
    pub fn output_text(&self, stored_value: &[u8], out: &mut Vec<u8>) {
        let v = stored_value;
        match self.id {
            TypeId::Bool => int::format_bool(v.first().is_some_and(|&b| b != 0), out),
            TypeId::Int2 => push_i64(out, i16::from_le_bytes(stored(v)).into()),
            TypeId::Int4 => push_i64(out, i32::from_le_bytes(stored(v)).into()),
            TypeId::Int8 => push_i64(out, i64::from_le_bytes(stored(v))),
            TypeId::Float4 => float::format_float4(f32::from_bits(u32::from_le_bytes(stored(v))), out),
            TypeId::Float8 => float::format_float8(f64::from_bits(u64::from_le_bytes(stored(v))), out),
            TypeId::Numeric => Numeric::decode_stored(v).write_text(out),
            TypeId::Text | TypeId::Varchar | TypeId::Bpchar => out.extend_from_slice(v),
            TypeId::Bytea => bytea::bytea_out(v, out),
            TypeId::Date => datetime::format_date(i32::from_le_bytes(stored(v)), out),
            TypeId::Timestamp => datetime::format_timestamp(i64::from_le_bytes(stored(v)), out),
            TypeId::Timestamptz => datetime::format_timestamptz(i64::from_le_bytes(stored(v)), out),
            TypeId::Oid => push_i64(out, u32::from_le_bytes(stored(v)).into()),
            TypeId::Name | TypeId::Char | TypeId::PgNodeTree | TypeId::NullArray => out.extend_from_slice(v),
            TypeId::Regtype => regtype_out(u32::from_le_bytes(stored(v)), out),
            TypeId::Regnamespace => regnamespace_out(u32::from_le_bytes(stored(v)), out),
            // Stored regclass values do not exist (not a column type); the number is what
            // PostgreSQL prints for an OID it cannot name.
            TypeId::Regclass => push_i64(out, u32::from_le_bytes(stored(v)).into()),
            TypeId::Array(_) | TypeId::Int2Vector | TypeId::OidVector => Array::decode(self, v).write_text(out),
            TypeId::Record(_) => Record::decode(self, v).write_text(out),
            TypeId::Void => {}
            TypeId::Json | TypeId::Jsonb => out.extend_from_slice(v),
            TypeId::Uuid => uuid::format(v, out),
            TypeId::Interval => Interval::decode(v).write_text(out),
            TypeId::Time => time::format_time(i64::from_le_bytes(stored(v)), out),
            TypeId::TimeTz => TimeTz::decode(v).write_text(out),
        }
    }

    /// Parses PostgreSQL's binary ("recv") representation, appending the storage form.
    /// Applies the same checks as the receive functions: exact width (`insufficient data
    /// left in message` / `incorrect binary data format`), UTF-8 validity and the
    /// varchar/char length rules for text, the date/timestamp range, numeric's sign, digits
    /// and dscale (then its `numeric(p,s)`).
    pub fn recv_binary(&self, wire: &[u8], out: &mut Vec<u8>) -> Result<()> {
        match self.id {
            TypeId::Bool => out.push(u8::from(recv_bool(wire)? != 0)),
            TypeId::Int2 => out.extend_from_slice(&i16::from_be_bytes(wire_exact(wire)?).to_le_bytes()),
            TypeId::Int4 | TypeId::Float4 => out.extend_from_slice(&u32::from_be_bytes(wire_exact(wire)?).to_le_bytes()),
            TypeId::Int8 | TypeId::Float8 => out.extend_from_slice(&u64::from_be_bytes(wire_exact(wire)?).to_le_bytes()),
            TypeId::Numeric => Numeric::recv_typmod(wire, self.typmod)?.encode_stored(out),
            TypeId::Text => {
                text::verify_utf8(wire)?;
                out.extend_from_slice(wire);
            }
            TypeId::Varchar => {
                text::verify_utf8(wire)?;
                text::varchar_in(wire, self.typmod, out)?;
            }
            TypeId::Bpchar => {
                text::verify_utf8(wire)?;
                text::bpchar_in(wire, self.typmod, out)?;
            }
            TypeId::Bytea => out.extend_from_slice(wire),
            TypeId::Date => {
                let d = datetime::check_date_recv(i32::from_be_bytes(wire_exact(wire)?))?;
                out.extend_from_slice(&d.to_le_bytes());
            }
            TypeId::Timestamp | TypeId::Timestamptz => {
                let t = i64::from_be_bytes(wire_exact(wire)?);
                let t = datetime::check_timestamp_recv(t, self.typmod)?;
                out.extend_from_slice(&t.to_le_bytes());
            }
            TypeId::Oid => out.extend_from_slice(&u32::from_be_bytes(wire_exact(wire)?).to_le_bytes()),
            TypeId::Name => {
                text::verify_utf8(wire)?;
                if wire.len() >= text::NAMEDATALEN {
                    return Err(PgError::new("42622", "identifier too long")
                        .with_detail(format!("Identifier must be less than {} characters.", text::NAMEDATALEN)));
                }
                out.extend_from_slice(wire);
            }
            TypeId::Char => text::char_recv(wire, out)?,
            TypeId::Regtype | TypeId::Regnamespace => out.extend_from_slice(&u32::from_be_bytes(wire_exact(wire)?).to_le_bytes()),
            TypeId::Regclass => return Err(regclass_needs_catalog()),
            TypeId::PgNodeTree => return Err(PgError::feature("cannot accept a value of type pg_node_tree")),
            TypeId::NullArray => return Err(PgError::feature(format!("arrays ({}) are not supported by heapstore", self.name()))),
            TypeId::Array(_) | TypeId::Int2Vector | TypeId::OidVector => array::recv(self, wire)?.encode(out),
            TypeId::Record(_) => return Err(PgError::feature("input of anonymous composite types is not implemented")),
            // void_recv consumes no bytes: any left over are an incorrect binary format.
            TypeId::Void => {
                wire_exact::<0>(wire)?;
            }
            TypeId::Json => {
                text::verify_utf8(wire)?;
                let s = std::str::from_utf8(wire).map_err(|_| util::incorrect_binary_format())?;
                json::validate(s)?;
                out.extend_from_slice(wire);
            }
            TypeId::Uuid => out.extend_from_slice(&wire_exact::<{ uuid::UUID_LEN }>(wire)?),
            TypeId::Jsonb => out.extend_from_slice(jsonb::recv(wire)?.to_text().as_bytes()),
            TypeId::Interval => Interval::recv(wire)?.encode(out),
            TypeId::Time => {
                out.extend_from_slice(&time::check_time_recv(i64::from_be_bytes(wire_exact(wire)?), self.typmod)?.to_le_bytes())
            }
            TypeId::TimeTz => TimeTz::recv(wire, self.typmod)?.encode(out),
        }
        Ok(())
    }

    /// Appends PostgreSQL's binary ("send") representation of a stored value.
    pub fn send_binary(&self, stored_value: &[u8], out: &mut Vec<u8>) {
        let v = stored_value;
        match self.id {
            TypeId::Bool => out.push(u8::from(v.first().is_some_and(|&b| b != 0))),
            TypeId::Int2 => out.extend_from_slice(&u16::from_le_bytes(stored(v)).to_be_bytes()),
            TypeId::Int4 | TypeId::Float4 | TypeId::Date | TypeId::Oid | TypeId::Regtype | TypeId::Regnamespace | TypeId::Regclass => {
                out.extend_from_slice(&u32::from_le_bytes(stored(v)).to_be_bytes())
            }
            TypeId::Int8 | TypeId::Float8 | TypeId::Timestamp | TypeId::Timestamptz | TypeId::Time => {
                out.extend_from_slice(&u64::from_le_bytes(stored(v)).to_be_bytes())
            }
            TypeId::TimeTz => TimeTz::decode(v).send(out),
            TypeId::Numeric => Numeric::decode_stored(v).send(out),
            TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Bytea | TypeId::Name | TypeId::PgNodeTree | TypeId::NullArray => {
                out.extend_from_slice(v)
            }
            // charsend: one byte, 0 for the empty value.
            TypeId::Char => out.push(v.first().copied().unwrap_or(0)),
            TypeId::Array(_) | TypeId::Int2Vector | TypeId::OidVector => Array::decode(self, v).send(out),
            TypeId::Record(_) => Record::decode(self, v).send(out),
            TypeId::Void => {}
            TypeId::Json | TypeId::Uuid => out.extend_from_slice(v),
            TypeId::Jsonb => {
                out.push(jsonb::BINARY_VERSION);
                out.extend_from_slice(v);
            }
            TypeId::Interval => Interval::decode(v).send(out),
        }
    }
}

/// Rounds a timestamp (or timestamptz) to a precision typmod (`-1`: unchanged).
pub fn adjust_timestamp(t: i64, typmod: i32) -> Result<i64> {
    datetime::adjust_timestamp_for_typmod(t, typmod)
}

/// The types `pg_type` lists for heapstore (regtype names them).
pub const BUILTIN: &[TypeId] = &[
    TypeId::Bool,
    TypeId::Bytea,
    TypeId::Char,
    TypeId::Name,
    TypeId::Int8,
    TypeId::Int2,
    TypeId::Int4,
    TypeId::Text,
    TypeId::Oid,
    TypeId::Float4,
    TypeId::Float8,
    TypeId::Bpchar,
    TypeId::Varchar,
    TypeId::Date,
    TypeId::Timestamp,
    TypeId::Timestamptz,
    TypeId::Numeric,
    TypeId::Regtype,
    TypeId::Regnamespace,
    TypeId::Regclass,
    TypeId::Json,
    TypeId::Uuid,
    TypeId::Jsonb,
    TypeId::Interval,
    TypeId::Time,
    TypeId::TimeTz,
    TypeId::Int2Vector,
    TypeId::OidVector,
    TypeId::Array(ArrayElem::Bool),
    TypeId::Array(ArrayElem::Int2),
    TypeId::Array(ArrayElem::Int4),
    TypeId::Array(ArrayElem::Int8),
    TypeId::Array(ArrayElem::Float4),
    TypeId::Array(ArrayElem::Float8),
    TypeId::Array(ArrayElem::Numeric),
    TypeId::Array(ArrayElem::Text),
    TypeId::Array(ArrayElem::Varchar),
    TypeId::Array(ArrayElem::Bpchar),
    TypeId::Array(ArrayElem::Bytea),
    TypeId::Array(ArrayElem::Date),
    TypeId::Array(ArrayElem::Timestamp),
    TypeId::Array(ArrayElem::Timestamptz),
    TypeId::Array(ArrayElem::Oid),
    TypeId::Array(ArrayElem::Name),
    TypeId::Array(ArrayElem::Char),
    TypeId::Array(ArrayElem::Regtype),
    TypeId::Array(ArrayElem::Uuid),
    TypeId::Array(ArrayElem::Jsonb),
    TypeId::Array(ArrayElem::Interval),
    TypeId::Array(ArrayElem::Time),
    TypeId::Array(ArrayElem::TimeTz),
];

/// The name (as `format_type` gives it) of a built-in PostgreSQL type heapstore does not
/// have, for one of the names SQL may write it with.
fn postgres_only_type(name: &str) -> Option<&'static str> {
    Some(match name {
        "bit" => "bit",
        "varbit" | "bit varying" => "bit varying",
        "money" => "money",
        "inet" => "inet",
        "cidr" => "cidr",
        "macaddr" => "macaddr",
        "macaddr8" => "macaddr8",
        "point" => "point",
        "line" => "line",
        "lseg" => "lseg",
        "box" => "box",
        "path" => "path",
        "polygon" => "polygon",
        "circle" => "circle",
        "tsvector" => "tsvector",
        "tsquery" => "tsquery",
        "xml" => "xml",
        "jsonpath" => "jsonpath",
        "int4range" => "int4range",
        "int8range" => "int8range",
        "numrange" => "numrange",
        "tsrange" => "tsrange",
        "tstzrange" => "tstzrange",
        "daterange" => "daterange",
        "int4multirange" => "int4multirange",
        "int8multirange" => "int8multirange",
        "nummultirange" => "nummultirange",
        "tsmultirange" => "tsmultirange",
        "tstzmultirange" => "tstzmultirange",
        "datemultirange" => "datemultirange",
        "pg_lsn" => "pg_lsn",
        "pg_snapshot" => "pg_snapshot",
        "txid_snapshot" => "txid_snapshot",
        "xid" => "xid",
        "xid8" => "xid8",
        "cid" => "cid",
        "tid" => "tid",
        "regproc" => "regproc",
        "regprocedure" => "regprocedure",
        "regoper" => "regoper",
        "regoperator" => "regoperator",
        "regrole" => "regrole",
        "regcollation" => "regcollation",
        "regconfig" => "regconfig",
        "regdictionary" => "regdictionary",
        _ => return None,
    })
}

/// `regtypein`: a type name (`integer`, `int4`, `pg_catalog.int4`, `character varying`,
/// `"char"`) or a number, to its OID.
pub fn regtype_in(s: &str) -> Result<u32> {
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return int::parse_oid(t);
    }
    regtype_oid(t).ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("type \"{t}\" does not exist")))
}

/// The OID of a type name as `to_regtype` reads it, or None.
pub fn regtype_oid(name: &str) -> Option<u32> {
    let n = name.trim();
    let n = n.strip_prefix("pg_catalog.").unwrap_or(n);
    let (base, args) = match n.find('(') {
        Some(i) => (&n[..i], n[i + 1..].trim_end_matches(')')),
        None => (n, ""),
    };
    let b = base.trim();
    // A quoted name is exact: "INTEGER" is no type.
    if b.starts_with('"') && b != "\"char\"" && b.chars().any(|c| c.is_ascii_uppercase()) {
        return None;
    }
    let base = if b == "\"char\"" { b } else { b.trim_matches('"') };
    let args: Vec<i64> = args.split(',').filter(|a| !a.trim().is_empty()).map(|a| a.trim().parse().unwrap_or(-1)).collect();
    let ty = SqlType::from_name(base, &args).ok()?;
    BUILTIN.contains(&ty.id).then(|| ty.pg_oid())
}

/// `regtypeout`: the type's name as `format_type` gives it, or the number for an OID that
/// names no type.
pub fn regtype_out(oid: u32, out: &mut Vec<u8>) {
    // InvalidOid prints as "-" in every reg* type's output.
    if oid == 0 {
        out.push(b'-');
        return;
    }
    match BUILTIN.iter().map(|&id| SqlType::new(id)).find(|t| t.pg_oid() == oid) {
        // format_type(oid, NULL): char without a length given is "character".
        Some(t) if t.id == TypeId::Bpchar => out.extend_from_slice(b"character"),
        Some(t) if t.id == TypeId::Array(ArrayElem::Bpchar) => out.extend_from_slice(b"character[]"),
        Some(t) => out.extend_from_slice(t.name().as_bytes()),
        None => match other_type_name(oid) {
            Some(n) => out.extend_from_slice(n.as_bytes()),
            None => push_i64(out, oid.into()),
        },
    }
}

/// heapstore's schemas: (OID, name).
pub const NAMESPACES: &[(u32, &str)] = &[(11, "pg_catalog"), (2200, "public"), (99, "pg_toast"), (13_000, "information_schema")];

/// `regnamespacein`: a schema name (or a number) to its OID.
pub fn regnamespace_in(s: &str) -> Result<u32> {
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return int::parse_oid(t);
    }
    let name = if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') {
        t[1..t.len() - 1].replace("\"\"", "\"")
    } else {
        t.to_ascii_lowercase()
    };
    NAMESPACES
        .iter()
        .find(|(_, n)| *n == name)
        .map(|(o, _)| *o)
        .ok_or_else(|| PgError::new(sqlstate::UNDEFINED_OBJECT, format!("schema \"{name}\" does not exist")))
}

/// `regnamespaceout`: the schema's name, or the number for an OID that names none.
pub fn regnamespace_out(oid: u32, out: &mut Vec<u8>) {
    if oid == 0 {
        out.push(b'-');
        return;
    }
    match NAMESPACES.iter().find(|(o, _)| *o == oid) {
        Some((_, n)) => out.extend_from_slice(n.as_bytes()),
        None => push_i64(out, oid.into()),
    }
}

/// The array types heapstore names (only as NULL-valued catalog columns): (OID, name).
pub const NULL_ARRAYS: &[(u32, &str)] = &[(1034, "aclitem[]"), (2277, "anyarray")];

/// Names of PostgreSQL's built-in types heapstore does not have (and of the NULL-only array
/// types), as `format_type` / `regtype` print them.
pub fn other_type_name(oid: u32) -> Option<&'static str> {
    const OTHERS: &[(u32, &str)] = &[
        (24, "regproc"),
        (27, "tid"),
        (28, "xid"),
        (29, "cid"),
        (142, "xml"),
        (600, "point"),
        (650, "cidr"),
        (705, "unknown"),
        (790, "money"),
        (829, "macaddr"),
        (869, "inet"),
        (1033, "aclitem"),
        (1186, "interval"),
        (1560, "bit"),
        (1562, "bit varying"),
        (2249, "record"),
        (2275, "cstring"),
        (2278, "void"),
        (2283, "anyelement"),
        (2950, "uuid"),
    ];
    OTHERS.iter().chain(NULL_ARRAYS).find(|(o, _)| *o == oid).map(|(_, n)| *n)
}

/// The name of a [`TypeId::NullArray`] type by its OID.
pub fn null_array_name(oid: u32) -> &'static str {
    NULL_ARRAYS.iter().find(|(o, _)| *o == oid).map_or("anyarray", |(_, n)| n)
}

fn regclass_needs_catalog() -> PgError {
    PgError::feature("regclass input outside a query (a parameter or COPY) is not supported by heapstore; cast the name in the query")
}

/// `boolrecv`: one byte, any non-zero value is true.
fn recv_bool(wire: &[u8]) -> Result<u8> {
    match wire {
        [b] => Ok(*b),
        [] => Err(PgError::new(sqlstate::PROTOCOL_VIOLATION, "no data left in message")),
        _ => Err(util::incorrect_binary_format()),
    }
}

/// `float(p)`: real for 1..=24 bits, double precision for 25..=53.
fn float_with_precision(args: &[i64]) -> Result<SqlType> {
    let id = match args {
        [] => TypeId::Float8,
        [p] if *p < 1 => return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "precision for type float must be at least 1 bit")),
        [p] if *p <= 24 => TypeId::Float4,
        [p] if *p <= 53 => TypeId::Float8,
        [_] => return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "precision for type float must be less than 54 bits")),
        _ => return Err(invalid_type_modifier()),
    };
    Ok(SqlType::new(id))
}

/// varchar(n) / char(n): `anychar_typmodin`.
fn char_type(id: TypeId, typname: &str, args: &[i64], default: i32) -> Result<SqlType> {
    let n = match args {
        [] => return Ok(SqlType::with_typmod(id, default)),
        [n] => *n,
        _ => return Err(invalid_type_modifier()),
    };
    if n < 1 {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("length for type {typname} must be at least 1")));
    }
    if n > MAX_CHAR_LENGTH {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("length for type {typname} cannot exceed {MAX_CHAR_LENGTH}")));
    }
    Ok(SqlType::with_typmod(id, n as i32))
}

/// timestamp(p) / timestamptz(p): `anytimestamp_typmod_check`.
/// timestamp(p), timestamptz(p), time(p), timetz(p): `anytimestamp_typmod_check` and
/// `anytime_typmod_check` (p > 6 is 6).
fn timestamp_type(id: TypeId, args: &[i64]) -> Result<SqlType> {
    let tz = if matches!(id, TypeId::Timestamptz | TypeId::TimeTz) { " WITH TIME ZONE" } else { "" };
    let kind = if matches!(id, TypeId::Time | TypeId::TimeTz) { "TIME" } else { "TIMESTAMP" };
    match args {
        [] => Ok(SqlType::new(id)),
        [p] if *p < 0 => Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("{kind}({p}){tz} precision must not be negative"))),
        [p] => Ok(SqlType::with_typmod(id, (*p).min(6) as i32)),
        _ => Err(invalid_type_modifier()),
    }
}

fn invalid_type_modifier() -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "invalid type modifier")
}

/// A decoded value, for tests, the SQL layer and the library API (not the COPY hot path).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int2(i16),
    Int4(i32),
    Int8(i64),
    Float4(f32),
    Float8(f64),
    Numeric(Numeric),
    /// text, varchar and char (char as stored, blank-padded).
    Text(String),
    Bytea(Vec<u8>),
    /// Days since 2000-01-01; `i32::MIN`/`MAX` are -infinity/infinity.
    Date(i32),
    /// Microseconds since 2000-01-01 00:00:00; `i64::MIN`/`MAX` are -infinity/infinity.
    Timestamp(i64),
    /// Microseconds since 2000-01-01 00:00:00 UTC; `i64::MIN`/`MAX` are -infinity/infinity.
    Timestamptz(i64),
    Oid(u32),
    Regtype(u32),
    Regnamespace(u32),
    /// A relation's OID and its name (or the number, for an OID that names none).
    Regclass(u32, String),
    /// An array or vector (its type inside).
    Array(Box<Array>),
    /// A record (its type inside).
    Record(Box<Record>),
    /// json text.
    Json(String),
    /// jsonb in its canonical text (`types::jsonb`).
    Jsonb(String),
    Uuid([u8; uuid::UUID_LEN]),
    Interval(Interval),
    /// Microseconds since midnight, `0..=86_400_000_000`.
    Time(i64),
    TimeTz(TimeTz),
}

impl Value {
    /// `*self = s.clone()`, without a call for the values that own no memory, and reusing
    /// `self`'s buffer when both are text: the executor's row-assembly loops.
    #[inline]
    pub fn assign_from(&mut self, s: &Value) {
        match (&mut *self, s) {
            (Value::Text(d), Value::Text(s)) => d.clone_from(s),
            (Value::Null, Value::Null) => {}
            (
                d @ (Value::Null | Value::Bool(_) | Value::Int2(_) | Value::Int4(_) | Value::Int8(_) | Value::Float8(_) | Value::Date(_)),
                s @ (Value::Null | Value::Bool(_) | Value::Int2(_) | Value::Int4(_) | Value::Int8(_) | Value::Float8(_) | Value::Date(_)),
            ) => {
                // Neither owns memory: a plain copy of the variant, nothing to drop.
                *d = match s {
                    Value::Bool(b) => Value::Bool(*b),
                    Value::Int2(n) => Value::Int2(*n),
                    Value::Int4(n) => Value::Int4(*n),
                    Value::Int8(n) => Value::Int8(*n),
                    Value::Float8(n) => Value::Float8(*n),
                    Value::Date(n) => Value::Date(*n),
                    _ => Value::Null,
                }
            }
            (d, s) => *d = s.clone(),
        }
    }

    /// `*self = Value::decode(ty, stored_value)`, writing in place where `self` already holds
    /// a value of the same kind (a text reuses its buffer): row decoding in scans.
    #[inline]
    pub fn decode_into(&mut self, ty: &SqlType, stored_value: &[u8]) {
        let v = stored_value;
        if let Value::Text(d) = self {
            if matches!(ty.id, TypeId::Text | TypeId::Varchar | TypeId::Bpchar) {
                if let Ok(s) = std::str::from_utf8(v) {
                    d.clear();
                    d.push_str(s);
                    return;
                }
            }
        }
        match (ty.id, self) {
            (TypeId::Int4, Value::Int4(d)) => *d = i32::from_le_bytes(stored(v)),
            (TypeId::Int8, Value::Int8(d)) => *d = i64::from_le_bytes(stored(v)),
            (TypeId::Int2, Value::Int2(d)) => *d = i16::from_le_bytes(stored(v)),
            (TypeId::Float8, Value::Float8(d)) => *d = f64::from_bits(u64::from_le_bytes(stored(v))),
            (TypeId::Date, Value::Date(d)) => *d = i32::from_le_bytes(stored(v)),
            (_, this) => *this = Value::decode(ty, v),
        }
    }

    /// Decodes a stored value of type `ty`.
    pub fn decode(ty: &SqlType, stored_value: &[u8]) -> Value {
        let v = stored_value;
        match ty.id {
            TypeId::Bool => Value::Bool(v.first().is_some_and(|&b| b != 0)),
            TypeId::Int2 => Value::Int2(i16::from_le_bytes(stored(v))),
            TypeId::Int4 => Value::Int4(i32::from_le_bytes(stored(v))),
            TypeId::Int8 => Value::Int8(i64::from_le_bytes(stored(v))),
            TypeId::Float4 => Value::Float4(f32::from_bits(u32::from_le_bytes(stored(v)))),
            TypeId::Float8 => Value::Float8(f64::from_bits(u64::from_le_bytes(stored(v)))),
            TypeId::Numeric => Value::Numeric(Numeric::decode_stored(v)),
            TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name | TypeId::Char | TypeId::PgNodeTree | TypeId::NullArray => {
                Value::Text(String::from_utf8_lossy(v).into_owned())
            }
            TypeId::Bytea => Value::Bytea(v.to_vec()),
            TypeId::Date => Value::Date(i32::from_le_bytes(stored(v))),
            TypeId::Timestamp => Value::Timestamp(i64::from_le_bytes(stored(v))),
            TypeId::Timestamptz => Value::Timestamptz(i64::from_le_bytes(stored(v))),
            TypeId::Oid => Value::Oid(u32::from_le_bytes(stored(v))),
            TypeId::Regtype => Value::Regtype(u32::from_le_bytes(stored(v))),
            TypeId::Regnamespace => Value::Regnamespace(u32::from_le_bytes(stored(v))),
            TypeId::Regclass => {
                let o = u32::from_le_bytes(stored(v));
                Value::Regclass(o, o.to_string())
            }
            TypeId::Array(_) | TypeId::Int2Vector | TypeId::OidVector => Value::Array(Box::new(Array::decode(ty, v))),
            TypeId::Record(_) => Value::Record(Box::new(Record::decode(ty, v))),
            TypeId::Void => Value::Text(String::new()),
            TypeId::Json => Value::Json(String::from_utf8_lossy(v).into_owned()),
            TypeId::Jsonb => Value::Jsonb(String::from_utf8_lossy(v).into_owned()),
            TypeId::Uuid => Value::Uuid(stored(v)),
            TypeId::Interval => Value::Interval(Interval::decode(v)),
            TypeId::Time => Value::Time(i64::from_le_bytes(stored(v))),
            TypeId::TimeTz => Value::TimeTz(TimeTz::decode(v)),
        }
    }

    /// Appends the storage form (nothing for `Null`). The caller is responsible for
    /// matching the column type (e.g. padding char(n) values, applying numeric(p,s)).
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Value::Null => {}
            Value::Bool(b) => out.push(u8::from(*b)),
            Value::Int2(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Int4(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Int8(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Float4(v) => out.extend_from_slice(&v.to_bits().to_le_bytes()),
            Value::Float8(v) => out.extend_from_slice(&v.to_bits().to_le_bytes()),
            Value::Numeric(n) => n.encode_stored(out),
            Value::Text(s) => out.extend_from_slice(s.as_bytes()),
            Value::Bytea(b) => out.extend_from_slice(b),
            Value::Date(d) => out.extend_from_slice(&d.to_le_bytes()),
            Value::Timestamp(t) | Value::Timestamptz(t) | Value::Time(t) => out.extend_from_slice(&t.to_le_bytes()),
            Value::TimeTz(t) => t.encode(out),
            Value::Oid(o) | Value::Regtype(o) | Value::Regnamespace(o) | Value::Regclass(o, _) => out.extend_from_slice(&o.to_le_bytes()),
            Value::Array(a) => a.encode(out),
            Value::Record(r) => r.encode(out),
            Value::Json(j) | Value::Jsonb(j) => out.extend_from_slice(j.as_bytes()),
            Value::Uuid(u) => out.extend_from_slice(u),
            Value::Interval(i) => i.encode(out),
        }
    }

    /// PostgreSQL's text output of this value as type `ty`; `None` for `Null`. A value
    /// of another kind than `ty` is printed as its own kind.
    pub fn to_text(&self, ty: &SqlType) -> Option<String> {
        let natural = self.natural_type()?;
        match self {
            Value::Regclass(_, name) => return Some(name.clone()),
            Value::Array(a) => {
                let mut out = Vec::new();
                a.write_text(&mut out);
                return Some(String::from_utf8_lossy(&out).into_owned());
            }
            Value::Record(r) => {
                let mut out = Vec::new();
                r.write_text(&mut out);
                return Some(String::from_utf8_lossy(&out).into_owned());
            }
            _ => {}
        }
        let text_like = matches!(ty.id, TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name | TypeId::Char);
        let ty = if natural.id == ty.id || (self.is_text() && text_like) { *ty } else { natural };
        let mut stored_value = Vec::new();
        self.encode(&mut stored_value);
        let mut out = Vec::new();
        ty.output_text(&stored_value, &mut out);
        Some(String::from_utf8_lossy(&out).into_owned())
    }

    fn is_text(&self) -> bool {
        matches!(self, Value::Text(_))
    }

    /// The type whose storage form `encode` writes (None for NULL).
    pub fn natural_type(&self) -> Option<SqlType> {
        let id = match self {
            Value::Null => return None,
            Value::Bool(_) => TypeId::Bool,
            Value::Int2(_) => TypeId::Int2,
            Value::Int4(_) => TypeId::Int4,
            Value::Int8(_) => TypeId::Int8,
            Value::Float4(_) => TypeId::Float4,
            Value::Float8(_) => TypeId::Float8,
            Value::Numeric(_) => TypeId::Numeric,
            Value::Text(_) => TypeId::Text,
            Value::Bytea(_) => TypeId::Bytea,
            Value::Date(_) => TypeId::Date,
            Value::Timestamp(_) => TypeId::Timestamp,
            Value::Timestamptz(_) => TypeId::Timestamptz,
            Value::Oid(_) => TypeId::Oid,
            Value::Regtype(_) => TypeId::Regtype,
            Value::Regnamespace(_) => TypeId::Regnamespace,
            Value::Regclass(..) => TypeId::Regclass,
            Value::Array(a) => return Some(a.ty),
            Value::Record(r) => return Some(r.ty),
            Value::Json(_) => TypeId::Json,
            Value::Jsonb(_) => TypeId::Jsonb,
            Value::Uuid(_) => TypeId::Uuid,
            Value::Interval(_) => TypeId::Interval,
            Value::Time(_) => TypeId::Time,
            Value::TimeTz(_) => TypeId::TimeTz,
        };
        Some(SqlType::new(id))
    }
}

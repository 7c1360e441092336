//! Composite values: those heapstore's functions return (`information_schema._pg_expandarray`'s
//! `(x anyelement, n integer)`, `jsonb_each`'s `(key, value)`), row constructors (`ROW(a, b)`,
//! `(a, b)`) and whole-row references (`t` naming a FROM item's row). PostgreSQL types such a
//! value `record`; heapstore knows its fields when the expression is bound ([`RecordKind`]),
//! so `(r).x` is typed then.
//!
//! Rows and whole-row references are [`RecordKind::Row`]: a reference to a shape (field names
//! and types, the FROM item whose whole row it is, the fields of type unknown) in a
//! process-wide registry, PostgreSQL's "anonymous record typmod" registry. Invariants: a
//! registered shape never changes or goes away (it is leaked, so reading a kind's fields takes
//! no lock), and one shape is registered once (the registry is deduplicated under its mutex,
//! so equal kinds are the same reference and compare by address; the registry grows with the
//! distinct shapes queries use, not with the queries). Row kinds are process-local, so records
//! are never stored in tables or the catalog: CREATE TABLE AS and CREATE VIEW refuse a record
//! column, and serializing a row kind fails.
//!
//! Text output is PostgreSQL's `record_out`: `(a,b)`, a field quoted when it is empty or holds
//! `"`, `\`, `(`, `)`, `,` or white space (quotes and backslashes doubled), a NULL field empty.
//! Binary output is `record_send`: the field count, then per field its type OID and its
//! length-prefixed send form (-1 for NULL).

use super::{ArrayElem, SqlType, TypeId, Value};

/// The composite types heapstore has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum RecordKind {
    /// `_pg_expandarray`'s row: (x the element, n integer).
    ExpandArray(ArrayElem),
    /// `jsonb_each`'s row (key text, value jsonb); `jsonb_each_text`'s (value text).
    JsonbEach { text: bool },
    /// A registered shape ([`RecordKind::row`]).
    Row(ShapeRef),
}

/// A registered shape: equal exactly when the same registration (the registry gives one shape
/// one registration).
#[derive(Clone, Copy)]
pub struct ShapeRef(&'static Shape);

impl PartialEq for ShapeRef {
    fn eq(&self, other: &ShapeRef) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}
impl Eq for ShapeRef {}
impl std::hash::Hash for ShapeRef {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        std::ptr::hash(self.0, h)
    }
}
impl std::fmt::Debug for ShapeRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.fields.iter().map(|(n, t)| (n, t.name()))).finish()
    }
}
impl serde::Serialize for ShapeRef {
    fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("a record type is process-local and is never stored"))
    }
}
impl<'de> serde::Deserialize<'de> for ShapeRef {
    fn deserialize<D: serde::Deserializer<'de>>(_: D) -> Result<ShapeRef, D::Error> {
        Err(serde::de::Error::custom("a record type is process-local and is never stored"))
    }
}

/// A registered record shape.
pub struct Shape {
    /// Its place in the registry (how temporary files name it).
    id: u32,
    fields: &'static [(&'static str, SqlType)],
    /// The table whose whole row this is (PostgreSQL would type it by the table's row type).
    table: Option<&'static str>,
    /// Fields made from an untyped literal or NULL: PostgreSQL leaves them `unknown` (read
    /// as text), a type without comparison operators.
    unknown: &'static [bool],
}

/// What identifies a shape: its fields (name, type), the FROM item whose whole row it is,
/// and which fields are of type unknown.
type ShapeKey = (Vec<(String, SqlType)>, Option<String>, Vec<bool>);

/// The shapes registered so far: by number, and by content (to give one shape one number).
#[derive(Default)]
struct Registry {
    index: std::collections::HashMap<ShapeKey, &'static Shape>,
    by_id: Vec<&'static Shape>,
}

fn registry() -> &'static std::sync::Mutex<Registry> {
    static R: std::sync::OnceLock<std::sync::Mutex<Registry>> = std::sync::OnceLock::new();
    R.get_or_init(Default::default)
}

/// PostgreSQL's limit on a row's fields (MaxTupleAttributeNumber).
pub const MAX_FIELDS: usize = 1664;

impl RecordKind {
    /// The kind of rows with these fields (name, type), the whole row of `table` if given.
    /// A shape already registered gets its number again; a new one is registered for good
    /// (the registry's memory is its distinct shapes, as PostgreSQL's record typmods).
    /// `unknown` marks the fields of `unknown` type (empty: none).
    pub fn row(fields: Vec<(String, SqlType)>, table: Option<&str>, unknown: Vec<bool>) -> RecordKind {
        let mut r = registry().lock().unwrap_or_else(|e| e.into_inner());
        let unknown = if unknown.contains(&true) { unknown } else { Vec::new() };
        let key = (fields, table.map(str::to_string), unknown);
        if let Some(&s) = r.index.get(&key) {
            return RecordKind::Row(ShapeRef(s));
        }
        let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
        let stored: Vec<(&'static str, SqlType)> = key.0.iter().map(|(n, t)| (leak(n), *t)).collect();
        let unknown: &'static [bool] = Box::leak(key.2.clone().into_boxed_slice());
        let id = u32::try_from(r.by_id.len()).expect("fewer than 2^32 record shapes");
        let shape: &'static Shape =
            Box::leak(Box::new(Shape { id, fields: Box::leak(stored.into_boxed_slice()), table: key.1.as_deref().map(leak), unknown }));
        r.index.insert(key, shape);
        r.by_id.push(shape);
        RecordKind::Row(ShapeRef(shape))
    }

    /// A row kind's number in this process's registry (temporary files write it), None for
    /// the functions' kinds.
    pub fn registered_id(self) -> Option<u32> {
        match self {
            RecordKind::Row(s) => Some(s.0.id),
            _ => None,
        }
    }

    /// The row kind numbered `id` by [`RecordKind::registered_id`] in this process.
    pub fn by_registered_id(id: u32) -> Option<RecordKind> {
        let r = registry().lock().unwrap_or_else(|e| e.into_inner());
        r.by_id.get(id as usize).map(|s| RecordKind::Row(ShapeRef(s)))
    }

    /// Whether field `i` is of type `unknown`.
    pub fn unknown(self, i: usize) -> bool {
        match self {
            RecordKind::Row(s) => s.0.unknown.get(i).copied().unwrap_or(false),
            _ => false,
        }
    }

    /// The FROM item whose whole row this kind is (None: an anonymous record).
    pub fn table(self) -> Option<&'static str> {
        match self {
            RecordKind::Row(s) => s.0.table,
            _ => None,
        }
    }

    /// The fields: (name, type).
    pub fn fields(self) -> std::borrow::Cow<'static, [(&'static str, SqlType)]> {
        use std::borrow::Cow;
        match self {
            RecordKind::Row(s) => Cow::Borrowed(s.0.fields),
            RecordKind::ExpandArray(e) => Cow::Owned(vec![("x", SqlType::new(e.id())), ("n", SqlType::new(TypeId::Int4))]),
            RecordKind::JsonbEach { text } => Cow::Owned(vec![
                ("key", SqlType::new(TypeId::Text)),
                ("value", SqlType::new(if text { TypeId::Text } else { TypeId::Jsonb })),
            ]),
        }
    }

    /// Whether records of kinds `self` and `other` have fields of the same types (names aside;
    /// nested records alike), the types PostgreSQL's record_eq / record_cmp require.
    pub fn same_field_types(self, other: RecordKind) -> bool {
        let (a, b) = (self.fields(), other.fields());
        a.len() == b.len()
            && a.iter().zip(b.iter()).enumerate().all(|(i, ((_, x), (_, y)))| {
                self.unknown(i) == other.unknown(i)
                    && match (x.id, y.id) {
                        (TypeId::Record(p), TypeId::Record(q)) => p.same_field_types(q),
                        (p, q) => p == q,
                    }
            })
    }
}

/// A record value: its type and one value per field.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// `TypeId::Record(..)`.
    pub ty: SqlType,
    pub fields: Vec<Value>,
}

impl Record {
    fn kind(&self) -> RecordKind {
        match self.ty.id {
            TypeId::Record(k) => k,
            _ => unreachable!("a record's type is a record type"),
        }
    }

    /// `record_out`.
    pub fn write_text(&self, out: &mut Vec<u8>) {
        out.push(b'(');
        for (i, ((_, ty), v)) in self.kind().fields().iter().zip(&self.fields).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let Some(t) = v.to_text(ty) else { continue };
            let quote = t.is_empty() || t.bytes().any(|c| matches!(c, b'"' | b'\\' | b'(' | b')' | b',') || super::util::is_space(c));
            if !quote {
                out.extend_from_slice(t.as_bytes());
                continue;
            }
            out.push(b'"');
            for c in t.bytes() {
                if c == b'"' || c == b'\\' {
                    out.push(c);
                }
                out.push(c);
            }
            out.push(b'"');
        }
        out.push(b')');
    }

    /// `record_send`.
    pub fn send(&self, out: &mut Vec<u8>) {
        let fields = self.kind().fields();
        out.extend_from_slice(&(fields.len() as i32).to_be_bytes());
        let mut stored = Vec::new();
        for ((_, ty), v) in fields.iter().zip(&self.fields) {
            out.extend_from_slice(&ty.pg_oid().to_be_bytes());
            if *v == Value::Null {
                out.extend_from_slice(&(-1i32).to_be_bytes());
                continue;
            }
            stored.clear();
            v.encode(&mut stored);
            let at = out.len();
            out.extend_from_slice(&[0; 4]);
            ty.send_binary(&stored, out);
            let n = (out.len() - at - 4) as i32;
            out[at..at + 4].copy_from_slice(&n.to_be_bytes());
        }
    }

    /// The storage form (only for passing values between plan nodes and through sorts and
    /// hashes, never into a table): per field an i32 size (-1: NULL) and its storage form.
    pub fn encode(&self, out: &mut Vec<u8>) {
        for v in &self.fields {
            if *v == Value::Null {
                out.extend_from_slice(&(-1i32).to_le_bytes());
                continue;
            }
            let at = out.len();
            out.extend_from_slice(&[0; 4]);
            v.encode(out);
            let n = (out.len() - at - 4) as i32;
            out[at..at + 4].copy_from_slice(&n.to_le_bytes());
        }
    }

    /// Reads [`Record::encode`]'s form.
    pub fn decode(ty: &SqlType, stored: &[u8]) -> Record {
        let TypeId::Record(kind) = ty.id else { unreachable!("a record type") };
        let mut p = 0usize;
        let mut fields = Vec::new();
        for (_, fty) in kind.fields().iter() {
            let size = stored.get(p..p + 4).map_or(-1, |b| i32::from_le_bytes(b.try_into().unwrap_or([0; 4])));
            p += 4;
            if size < 0 {
                fields.push(Value::Null);
                continue;
            }
            let b = stored.get(p..p + size as usize).unwrap_or(&[]);
            p += size as usize;
            fields.push(Value::decode(fty, b));
        }
        Record { ty: *ty, fields }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_shape_is_registered_once_and_never_serialized() {
        let int4 = SqlType::new(TypeId::Int4);
        let text = SqlType::new(TypeId::Text);
        let a = RecordKind::row(vec![("a".into(), int4), ("b".into(), text)], None, vec![false, false]);
        let b = RecordKind::row(vec![("a".into(), int4), ("b".into(), text)], None, Vec::new());
        assert_eq!(a, b, "the same shape is the same kind");
        let renamed = RecordKind::row(vec![("x".into(), int4), ("y".into(), text)], None, Vec::new());
        assert_ne!(a, renamed);
        assert!(a.same_field_types(renamed), "names aside, the field types match");
        let untyped = RecordKind::row(vec![("a".into(), int4), ("b".into(), text)], None, vec![false, true]);
        assert_ne!(a, untyped);
        assert!(untyped.unknown(1) && !untyped.unknown(0) && !a.unknown(1));
        assert!(!a.same_field_types(untyped), "an unknown field is not text");
        let id = a.registered_id().expect("a row kind");
        assert_eq!(RecordKind::by_registered_id(id), Some(a));
        assert_eq!(a.fields().iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["a", "b"]);
        // Row kinds are process-local: the catalog can never hold one.
        assert!(serde_json::to_vec(&SqlType::new(TypeId::Record(a))).is_err());
        assert!(serde_json::to_vec(&SqlType::new(TypeId::Record(RecordKind::JsonbEach { text: true }))).is_ok());
        // Text and binary output as record_out / record_send.
        let r = Record { ty: SqlType::new(TypeId::Record(a)), fields: vec![Value::Int4(1), Value::Text("a b".into())] };
        let mut out = Vec::new();
        r.write_text(&mut out);
        assert_eq!(out, b"(1,\"a b\")");
        let mut stored = Vec::new();
        r.encode(&mut stored);
        assert_eq!(Record::decode(&r.ty, &stored), r);
    }
}

//! Composite values that heapstore's functions return: `information_schema._pg_expandarray`'s
//! `(x anyelement, n integer)`. PostgreSQL types such a value `record`; heapstore knows its
//! fields from the function that made it ([`RecordKind`]), so `(r).x` is typed when bound.
//! Records are never stored in tables (a column cannot be of a record type).
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
}

impl RecordKind {
    /// The fields: (name, type).
    pub fn fields(self) -> Vec<(&'static str, SqlType)> {
        match self {
            RecordKind::ExpandArray(e) => vec![("x", SqlType::new(e.id())), ("n", SqlType::new(TypeId::Int4))],
            RecordKind::JsonbEach { text } => {
                vec![("key", SqlType::new(TypeId::Text)), ("value", SqlType::new(if text { TypeId::Text } else { TypeId::Jsonb }))]
            }
        }
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
        for (i, ((_, ty), v)) in self.kind().fields().into_iter().zip(&self.fields).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let Some(t) = v.to_text(&ty) else { continue };
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
        for ((_, ty), v) in fields.into_iter().zip(&self.fields) {
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
        for (_, fty) in kind.fields() {
            let size = stored.get(p..p + 4).map_or(-1, |b| i32::from_le_bytes(b.try_into().unwrap_or([0; 4])));
            p += 4;
            if size < 0 {
                fields.push(Value::Null);
                continue;
            }
            let b = stored.get(p..p + size as usize).unwrap_or(&[]);
            p += size as usize;
            fields.push(Value::decode(&fty, b));
        }
        Record { ty: *ty, fields }
    }
}

//! TEMPORARY minimal types module; replaced by the full PostgreSQL type I/O.
use crate::error::{sqlstate, PgError, Result};
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TypeId {
    Bool,
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Text,
    Varchar,
    Bpchar,
    Bytea,
    Date,
    Timestamp,
}
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct SqlType {
    pub id: TypeId,
    pub typmod: i32,
}
impl SqlType {
    pub const fn new(id: TypeId) -> Self {
        SqlType { id, typmod: -1 }
    }
    pub fn from_name(name: &str, _a: &[i64]) -> Result<SqlType> {
        Ok(SqlType::new(match name {
            "integer" | "int" => TypeId::Int4,
            "bigint" => TypeId::Int8,
            "text" => TypeId::Text,
            _ => return Err(PgError::new(sqlstate::UNDEFINED_OBJECT, format!("type \"{name}\" does not exist"))),
        }))
    }
    pub fn name(&self) -> String {
        format!("{:?}", self.id)
    }
    pub fn fixed_len(&self) -> Option<usize> {
        match self.id {
            TypeId::Int4 => Some(4),
            TypeId::Int8 => Some(8),
            _ => None,
        }
    }
    pub fn input_text(&self, s: &str, out: &mut Vec<u8>) -> Result<()> {
        match self.id {
            TypeId::Int4 => out.extend_from_slice(
                &s.parse::<i32>().map_err(|_| PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "bad"))?.to_le_bytes(),
            ),
            TypeId::Int8 => out.extend_from_slice(
                &s.parse::<i64>().map_err(|_| PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "bad"))?.to_le_bytes(),
            ),
            _ => out.extend_from_slice(s.as_bytes()),
        }
        Ok(())
    }
    pub fn output_text(&self, v: &[u8], out: &mut Vec<u8>) {
        match self.id {
            TypeId::Int4 => out.extend_from_slice(i32::from_le_bytes(v.try_into().unwrap()).to_string().as_bytes()),
            TypeId::Int8 => out.extend_from_slice(i64::from_le_bytes(v.try_into().unwrap()).to_string().as_bytes()),
            _ => out.extend_from_slice(v),
        }
    }
    pub fn recv_binary(&self, v: &[u8], out: &mut Vec<u8>) -> Result<()> {
        out.extend_from_slice(v);
        Ok(())
    }
    pub fn send_binary(&self, v: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(v)
    }
}

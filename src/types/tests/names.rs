//! Type names: resolution from SQL, `format_type` names, OIDs and widths.

use crate::types::{SqlType, TypeId};

fn resolve(name: &str, args: &[i64]) -> SqlType {
    SqlType::from_name(name, args).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn error(name: &str, args: &[i64]) -> (&'static str, String) {
    let e = SqlType::from_name(name, args).unwrap_err();
    (e.code, e.message.clone())
}

#[test]
fn resolves_sql_names() {
    let cases: &[(&str, &[i64], TypeId, i32, &str)] = &[
        ("BOOLEAN", &[], TypeId::Bool, -1, "boolean"),
        ("int2", &[], TypeId::Int2, -1, "smallint"),
        ("Integer", &[], TypeId::Int4, -1, "integer"),
        ("int", &[], TypeId::Int4, -1, "integer"),
        ("bigint", &[], TypeId::Int8, -1, "bigint"),
        ("float4", &[], TypeId::Float4, -1, "real"),
        ("double  precision", &[], TypeId::Float8, -1, "double precision"),
        ("float", &[], TypeId::Float8, -1, "double precision"),
        ("float", &[24], TypeId::Float4, -1, "real"),
        ("float", &[25], TypeId::Float8, -1, "double precision"),
        ("text", &[], TypeId::Text, -1, "text"),
        ("varchar", &[16], TypeId::Varchar, 16, "character varying(16)"),
        ("character varying", &[], TypeId::Varchar, -1, "character varying"),
        ("char", &[12], TypeId::Bpchar, 12, "character(12)"),
        ("character", &[], TypeId::Bpchar, 1, "character(1)"),
        ("bpchar", &[], TypeId::Bpchar, -1, "bpchar"),
        ("bytea", &[], TypeId::Bytea, -1, "bytea"),
        ("date", &[], TypeId::Date, -1, "date"),
        ("timestamp", &[], TypeId::Timestamp, -1, "timestamp without time zone"),
        ("timestamp without time zone", &[3], TypeId::Timestamp, 3, "timestamp(3) without time zone"),
        ("timestamp", &[9], TypeId::Timestamp, 6, "timestamp(6) without time zone"),
        ("time", &[], TypeId::Time, -1, "time without time zone"),
        ("time without time zone", &[0], TypeId::Time, 0, "time(0) without time zone"),
        ("timetz", &[7], TypeId::TimeTz, 6, "time(6) with time zone"),
        ("time with time zone", &[], TypeId::TimeTz, -1, "time with time zone"),
        ("numeric", &[], TypeId::Numeric, -1, "numeric"),
        ("decimal", &[10, 2], TypeId::Numeric, (10 << 16 | 2) + 4, "numeric(10,2)"),
        ("NUMERIC", &[5], TypeId::Numeric, (5 << 16) + 4, "numeric(5,0)"),
        ("numeric", &[3, -2], TypeId::Numeric, (3 << 16 | 0x7fe) + 4, "numeric(3,-2)"),
    ];
    for &(name, args, id, typmod, formatted) in cases {
        let ty = resolve(name, args);
        assert_eq!((ty.id, ty.typmod), (id, typmod), "{name}");
        assert_eq!(ty.name(), formatted, "{name}");
    }
}

#[test]
fn rejects_bad_names_and_modifiers() {
    let s = |m: &str| m.to_string();
    assert_eq!(error("foo", &[]), ("42704", s("type \"foo\" does not exist")));
    assert_eq!(error("varchar", &[0]), ("22023", s("length for type varchar must be at least 1")));
    assert_eq!(error("char", &[0]), ("22023", s("length for type char must be at least 1")));
    assert_eq!(error("varchar", &[10_485_761]), ("22023", s("length for type varchar cannot exceed 10485760")));
    assert_eq!(error("int4", &[5]), ("42601", s("type modifier is not allowed for type \"int4\"")));
    assert_eq!(error("text", &[5]), ("42601", s("type modifier is not allowed for type \"text\"")));
    assert_eq!(error("float", &[0]), ("22023", s("precision for type float must be at least 1 bit")));
    assert_eq!(error("time", &[-1]), ("22023", s("TIME(-1) precision must not be negative")));
    assert_eq!(error("timetz", &[-2]), ("22023", s("TIME(-2) WITH TIME ZONE precision must not be negative")));
    assert_eq!(error("float", &[54]), ("22023", s("precision for type float must be less than 54 bits")));
    assert_eq!(error("timestamp", &[-1]), ("22023", s("TIMESTAMP(-1) precision must not be negative")));
}

#[test]
fn oids_widths_and_input_names() {
    let expect = [
        (TypeId::Bool, 16, Some(1), "boolean"),
        (TypeId::Int2, 21, Some(2), "smallint"),
        (TypeId::Int4, 23, Some(4), "integer"),
        (TypeId::Int8, 20, Some(8), "bigint"),
        (TypeId::Float4, 700, Some(4), "real"),
        (TypeId::Float8, 701, Some(8), "double precision"),
        (TypeId::Numeric, 1700, None, "numeric"),
        (TypeId::Text, 25, None, "text"),
        (TypeId::Varchar, 1043, None, "character varying"),
        (TypeId::Bpchar, 1042, None, "character"),
        (TypeId::Bytea, 17, None, "bytea"),
        (TypeId::Date, 1082, Some(4), "date"),
        (TypeId::Timestamp, 1114, Some(8), "timestamp"),
    ];
    for (id, oid, len, input_name) in expect {
        let ty = SqlType::new(id);
        assert_eq!((ty.pg_oid(), ty.fixed_len(), ty.input_name()), (oid, len, input_name));
    }
}

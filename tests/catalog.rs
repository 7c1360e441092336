//! The generated `pg_catalog` and the types and functions that come with it: timestamptz
//! (UTC), oid, name, "char", regtype, regclass; now() and CURRENT_TIMESTAMP; the catalog
//! relations as ordinary relations (joins, filters, own uncommitted DDL); the catalog
//! functions; regular expressions, ANY (ARRAY[...]), COLLATE; COPY (query) TO. Expected values
//! are PostgreSQL 15's answers for the same statements.

mod common;
use common::rows;

use heapstore::Session;

fn one(s: &mut Session, sql: &str) -> String {
    let r = rows(s, sql);
    assert_eq!(r.len(), 1, "{sql}: {r:?}");
    r[0].clone()
}

fn code(s: &mut Session, sql: &str) -> String {
    match s.execute(sql) {
        Ok(_) => panic!("{sql}: succeeded"),
        Err(e) => e.code.to_string(),
    }
}

fn column_types(s: &mut Session, sql: &str) -> Vec<String> {
    s.execute(sql).unwrap().last().unwrap().columns.iter().map(|c| c.1.clone()).collect()
}

#[test]
fn timestamptz_oid_name_char_and_reg_types() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    // timestamptz: offsets applied, printed in the session's zone (UTC by default).
    assert_eq!(one(&mut s, "SELECT '2024-02-29 12:00:00+05'::timestamptz"), "2024-02-29 07:00:00+00");
    assert_eq!(one(&mut s, "SELECT '2024-02-29 12:00:00.5-03:30'::timestamptz"), "2024-02-29 15:30:00.5+00");
    assert_eq!(one(&mut s, "SELECT '2024-02-29 12:00 UTC'::timestamptz"), "2024-02-29 12:00:00+00");
    assert_eq!(one(&mut s, "SELECT '0001-01-01 00:00:00 BC'::timestamptz"), "0001-01-01 00:00:00+00 BC");
    assert_eq!(one(&mut s, "SELECT 'infinity'::timestamptz"), "infinity");
    // A fixed abbreviation is its offset; DST after it moves it an hour east; an abbreviation
    // whose offset depends on the date is refused, not guessed.
    assert_eq!(
        one(&mut s, "SELECT '2024-01-01 12:00 EST'::timestamptz, '2024-01-01 12:00 cest'::timestamptz"),
        "2024-01-01 17:00:00+00|2024-01-01 10:00:00+00"
    );
    assert_eq!(
        one(&mut s, "SELECT '2024-01-01 10:00 UTC DST'::timestamptz, '2024-01-01 10:00 EST DST'::timestamptz"),
        "2024-01-01 09:00:00+00|2024-01-01 14:00:00+00"
    );
    // A date-dependent abbreviation is its zone's offset at that date (MSK is +03 in 2024,
    // +04 in the summer of 2011); at a date its zone did not use it, refused, not guessed.
    assert_eq!(
        one(&mut s, "SELECT '2024-07-01 10:00 MSK'::timestamptz, '2011-07-01 10:00 MSK'::timestamptz"),
        "2024-07-01 07:00:00+00|2011-07-01 06:00:00+00"
    );
    assert_eq!(code(&mut s, "SELECT '1990-07-01 10:00 MSK'::timestamptz"), "0A000", "MSK was not in use: refused, not guessed");
    assert_eq!(one(&mut s, "SELECT '2024-01-01 12:00 EST'::timestamp"), "2024-01-01 12:00:00", "timestamp ignores zones");
    assert_eq!(one(&mut s, "SELECT '2024-01-01'::date < '2024-01-01 00:00:01+00'::timestamptz"), "t");
    assert_eq!(one(&mut s, "SELECT '2024-05-01 10:00+02'::timestamptz::timestamp"), "2024-05-01 08:00:00");
    assert_eq!(one(&mut s, "SELECT date_trunc('month', '2024-05-17 10:00+00'::timestamptz)"), "2024-05-01 00:00:00+00");
    assert_eq!(one(&mut s, "SELECT extract(year from '2024-05-01 00:00+00'::timestamptz)"), "2024");
    // oid: unsigned, negative values wrap as PostgreSQL's oidin does.
    assert_eq!(one(&mut s, "SELECT '12345'::oid, '-1'::oid, 4294967295::oid"), "12345|4294967295|4294967295");
    assert_eq!(code(&mut s, "SELECT '4294967296'::oid"), "22003");
    assert_eq!(one(&mut s, "SELECT 4294967295::oid = -1"), "t");
    // name: cut to 63 bytes; "char": one byte.
    assert_eq!(one(&mut s, "SELECT repeat('x', 70)::name = repeat('x', 63)"), "t");
    assert_eq!(one(&mut s, "SELECT 'r'::\"char\", ''::\"char\" IS NULL, 'xyz'::\"char\""), "r|f|x");
    // regtype / regclass print names.
    assert_eq!(
        one(&mut s, "SELECT 'int4'::regtype, 'character varying'::regtype::oid, 1184::regtype"),
        "integer|1043|timestamp with time zone"
    );
    assert_eq!(one(&mut s, "SELECT to_regtype('hstore') IS NULL, to_regtype('pg_catalog.int8')::oid"), "t|20");
    assert_eq!(one(&mut s, "SELECT 'pg_class'::regclass, 'pg_class'::regclass::oid"), "pg_class|1259");
    assert_eq!(code(&mut s, "SELECT 'no_such_table'::regclass"), "42P01");
    assert_eq!(
        column_types(&mut s, "SELECT now(), LOCALTIMESTAMP, 1::oid, 'a'::name, 'b'::\"char\", 'int4'::regtype"),
        ["timestamp with time zone", "timestamp without time zone", "oid", "name", "\"char\"", "regtype"]
    );
    // Stored and read back, COPY text and binary included.
    s.execute("CREATE TABLE t (id int PRIMARY KEY, at timestamptz, o oid, n name, c \"char\")").unwrap();
    s.execute("INSERT INTO t VALUES (1, '2024-02-29 12:00:00+01', 16384, 'hello', 'r')").unwrap();
    let text = common::copy_out(&mut s, "COPY t TO STDOUT");
    assert_eq!(String::from_utf8(text).unwrap(), "1\t2024-02-29 11:00:00+00\t16384\thello\tr\n");
    let bin = common::copy_out(&mut s, "COPY t TO STDOUT (FORMAT binary)");
    s.execute("CREATE TABLE t2 (id int PRIMARY KEY, at timestamptz, o oid, n name, c \"char\")").unwrap();
    common::copy_in(&mut s, "COPY t2 FROM STDIN (FORMAT binary)", &bin).unwrap();
    assert_eq!(rows(&mut s, "SELECT * FROM t2"), rows(&mut s, "SELECT * FROM t"));
    assert_eq!(one(&mut s, "SELECT count(*) FROM t WHERE o = 16384 AND c = 'r' AND at > '2024-01-01'"), "1");
    assert_eq!(code(&mut s, "CREATE TABLE bad (r regclass)"), "0A000");
    // Review cases: PostgreSQL's answers, or a refusal.
    assert_eq!(
        one(&mut s, "SELECT format_type(23, NULL), format_type(1043, 4), format_type(0, NULL), format_type(1186, NULL)"),
        "integer|character varying|-|interval"
    );
    assert_eq!(one(&mut s, "SELECT 1042::regtype, 'bpchar'::regtype, to_regtype('\"INTEGER\"') IS NULL"), "character|character|t");
    assert_eq!(code(&mut s, "SELECT (-1)::int8::oid"), "22003");
    assert_eq!(one(&mut s, "SELECT (-1)::int4::oid"), "4294967295");
    assert_eq!(code(&mut s, "SELECT '5'::\"char\"::int"), "0A000");
    assert_eq!(code(&mut s, "INSERT INTO t (id, c) VALUES (9, 65)"), "42804");
    assert_eq!(one(&mut s, "SELECT to_regclass('T')::text, to_regclass('\"T\"') IS NULL, 'PG_CLASS'::regclass"), "t|t|pg_class");
    assert_eq!(
        one(&mut s, "SELECT pg_get_userbyid(12345), pg_encoding_to_char(8), pg_encoding_to_char(99)"),
        "unknown (OID=12345)|LATIN1|"
    );
    assert_eq!(one(&mut s, "SELECT current_setting('no.such', true) IS NULL"), "t");
    // TimeZone is UTC: to_char's zone patterns print it.
    assert_eq!(one(&mut s, "SELECT to_char(timestamptz '2024-03-05 14:00+02', 'HH24 TZ OF')"), "12 UTC +00");
    // An untyped literal compared with a column takes its type, not its length or scale.
    s.execute("CREATE TABLE m (v varchar(2), n numeric(5,2), c char(2))").unwrap();
    s.execute("INSERT INTO m VALUES ('ab', 1.23, 'ab')").unwrap();
    assert_eq!(one(&mut s, "SELECT count(*) FROM m WHERE v = 'ab '"), "0");
    assert_eq!(one(&mut s, "SELECT count(*) FROM m WHERE n = '1.234'"), "0");
    assert_eq!(one(&mut s, "SELECT count(*) FROM m WHERE v IN ('ab  ')"), "0");
    assert_eq!(one(&mut s, "SELECT v = 'abc', c = 'abc' FROM m"), "f|f");
    assert_eq!(code(&mut s, "SELECT 1 = ANY (ARRAY['1'])"), "42883");
}

#[test]
fn now_is_the_transaction_start() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    s.execute("BEGIN").unwrap();
    let a = one(&mut s, "SELECT now()");
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert_eq!(one(&mut s, "SELECT CURRENT_TIMESTAMP"), a);
    assert_eq!(one(&mut s, "SELECT transaction_timestamp() = now(), LOCALTIMESTAMP = now()::timestamp"), "t|t");
    assert!(a.ends_with("+00"), "{a}");
    s.execute("COMMIT").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert_ne!(one(&mut s, "SELECT now()"), a);
    s.execute("CREATE TABLE ev (id int, at timestamptz)").unwrap();
    s.execute("INSERT INTO ev VALUES (1, now())").unwrap();
    assert_eq!(one(&mut s, "SELECT count(*) FROM ev WHERE at <= now()"), "1");
}

#[test]
fn catalog_relations_answer_from_the_catalog() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE emp (id integer PRIMARY KEY, name varchar(20) UNIQUE, salary numeric(10,2) NOT NULL, code char(3))").unwrap();
    s.execute("CREATE INDEX emp_salary ON emp (salary)").unwrap();
    // pg_class joined with pg_namespace, as drivers ask.
    assert_eq!(
        rows(
            &mut s,
            "SELECT c.relname, c.relkind, n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = 'public' ORDER BY c.relname"
        ),
        ["emp|r|public", "emp_name_key|i|public", "emp_pkey|i|public", "emp_salary|i|public"]
    );
    // Columns with their types as format_type prints them.
    assert_eq!(
        rows(
            &mut s,
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_attribute a \
             WHERE a.attrelid = 'emp'::regclass AND a.attnum > 0 ORDER BY a.attnum"
        ),
        ["id|integer|t", "name|character varying(20)|f", "salary|numeric(10,2)|t", "code|character(3)|f"]
    );
    // Indexes and constraints (pretty: no schema for a relation on the search path, as
    // PostgreSQL prints it).
    assert_eq!(
        rows(
            &mut s,
            "SELECT c2.relname, i.indisprimary, i.indisunique, pg_get_indexdef(i.indexrelid, 0, true), \
             pg_get_constraintdef(con.oid, true), con.contype \
             FROM pg_class c, pg_class c2, pg_index i LEFT JOIN pg_constraint con ON (conrelid = i.indrelid AND conindid = i.indexrelid) \
             WHERE c.relname = 'emp' AND c.oid = i.indrelid AND i.indexrelid = c2.oid ORDER BY i.indisprimary DESC, c2.relname"
        ),
        [
            "emp_pkey|t|t|CREATE UNIQUE INDEX emp_pkey ON emp USING btree (id)|PRIMARY KEY (id)|p",
            "emp_name_key|f|t|CREATE UNIQUE INDEX emp_name_key ON emp USING btree (name)|UNIQUE (name)|u",
            "emp_salary|f|f|CREATE INDEX emp_salary ON emp USING btree (salary)|NULL|NULL",
        ]
    );
    // information_schema.
    assert_eq!(
        one(&mut s, "SELECT table_type FROM information_schema.tables WHERE table_schema = 'public' AND table_name = 'emp'"),
        "BASE TABLE"
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT column_name, data_type, character_maximum_length, numeric_precision, numeric_scale, is_nullable \
             FROM information_schema.columns WHERE table_name = 'emp' ORDER BY ordinal_position"
        ),
        [
            "id|integer|NULL|32|0|NO",
            "name|character varying|20|NULL|NULL|YES",
            "salary|numeric|NULL|10|2|NO",
            "code|character|3|NULL|NULL|YES"
        ]
    );
    // pg_type has PostgreSQL's OIDs; the catalogs describe themselves.
    assert_eq!(one(&mut s, "SELECT oid, typlen, typcategory FROM pg_type WHERE typname = 'int4'"), "23|4|N");
    assert_eq!(one(&mut s, "SELECT relkind FROM pg_class WHERE oid = 'pg_class'::regclass"), "r");
    assert_eq!(one(&mut s, "SELECT current_database(), current_user, current_schema()"), "postgres|postgres|public");
    assert_eq!(one(&mut s, "SELECT datname, pg_encoding_to_char(encoding) FROM pg_database"), "postgres|UTF8");
    assert_eq!(one(&mut s, "SELECT count(*) FROM pg_description"), "0");
    // A column of a type heapstore does not have is refused, never faked; always-NULL
    // arrays read as NULL.
    assert_eq!(code(&mut s, "SELECT typinput FROM pg_type"), "0A000");
    assert_eq!(code(&mut s, "SELECT relfrozenxid FROM pg_class"), "0A000");
    assert_eq!(one(&mut s, "SELECT relacl IS NULL, array_to_string(reloptions, ',') IS NULL FROM pg_class WHERE relname = 'emp'"), "t|t");
    assert_eq!(code(&mut s, "SELECT * FROM pg_catalog.pg_proc"), "0A000");
    // Sizes of the files as they are, PostgreSQL's pg_size_pretty.
    s.execute("INSERT INTO emp VALUES (1, 'a', 1, 'x')").unwrap();
    assert_eq!(one(&mut s, "SELECT pg_relation_size('emp') > 0, pg_total_relation_size('emp'::regclass) > pg_relation_size('emp')"), "t|t");
    assert_eq!(
        rows(&mut s, "SELECT pg_size_pretty(x) FROM (VALUES (10239::bigint), (10240), (20971519), (123456789012), (-12345)) v(x)"),
        ["10239 bytes", "10 kB", "20 MB", "115 GB", "-12 kB"]
    );
}

#[test]
fn own_uncommitted_ddl_is_visible_to_the_session_only_and_plans_are_not_stale() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut a = db.session();
    let mut b = db.session();
    let p = a.prepare("SELECT count(*) FROM pg_class WHERE relnamespace = 2200").unwrap();
    let count = |s: &mut Session| s.execute_prepared(&p, &[]).unwrap().rows[0][0].clone().unwrap();
    assert_eq!(count(&mut a), "0");
    a.execute("BEGIN").unwrap();
    a.execute("CREATE TABLE t (x int PRIMARY KEY)").unwrap();
    assert_eq!(count(&mut a), "2", "the table and its index, to their creator");
    assert_eq!(one(&mut b, "SELECT count(*) FROM pg_class WHERE relnamespace = 2200"), "0", "not to others before COMMIT");
    a.execute("COMMIT").unwrap();
    assert_eq!(one(&mut b, "SELECT count(*) FROM pg_class WHERE relnamespace = 2200"), "2");
}

#[test]
fn regex_any_array_collate_quote_literal_and_copy_query() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    assert_eq!(
        one(&mut s, "SELECT 'pg_class' ~ '^pg_', 'public' !~ '^pg_', 'ABC' ~* 'b', 'a\nb' ~ 'a.b', 'x' ~ NULL IS NULL"),
        "t|t|t|t|t"
    );
    assert_eq!(one(&mut s, "SELECT '٣' ~ '\\d', '3' ~ '^\\d$'"), "f|t");
    assert_eq!(code(&mut s, "SELECT 'aa' ~ '(a)\\1'"), "0A000", "back-references are refused, not misread");
    for (pattern, what) in [
        ("a\\b", "\\b is a backspace in PostgreSQL"),
        ("[a&&b]", "class intersection"),
        ("[[.space.]]", "collating element"),
        ("[\\d]", "class escape in brackets"),
        ("a{256}", "bound over 255"),
        ("a**", "double quantifier"),
        ("(?m)a", "embedded option"),
    ] {
        assert_eq!(code(&mut s, &format!("SELECT 'a' ~ '{pattern}'")), "0A000", "{what}");
    }
    assert_eq!(code(&mut s, "SELECT 'É' ~* 'é'"), "0A000");
    assert_eq!(code(&mut s, "SELECT 'ſ' ~* 's'"), "0A000", "non-ASCII text under ~* is refused when matched");
    assert_eq!(
        one(&mut s, "SELECT 'abc' ~ '^a[b-c]+$', 'x.y' ~ 'x\\.y', 'aaa' ~ '^a{2,3}$', 'ab' ~ '(?:a)b', 'Hi' ~* '^h[[:alpha:]]'"),
        "t|t|t|t|t"
    );
    assert_eq!(one(&mut s, "SELECT 'r' = ANY (ARRAY['r', 'p']), 'x' = ANY (ARRAY['r', 'p']), 3 > ALL (ARRAY[1, 2])"), "t|f|t");
    assert_eq!(one(&mut s, "SELECT NULL::int = ANY (ARRAY[1]) IS NULL, 1 = ANY (ARRAY[NULL::int, 1])"), "t|t");
    assert_eq!(one(&mut s, "SELECT 'b' COLLATE \"C\" > 'a', 'b' COLLATE pg_catalog.default > 'a'"), "t|t");
    assert_eq!(code(&mut s, "SELECT 'b' COLLATE \"de_DE\" > 'a'"), "0A000");
    assert_eq!(
        one(&mut s, "SELECT quote_literal('it''s'), quote_literal('a\\b'), quote_literal(42), quote_nullable(NULL)"),
        "'it''s'|E'a\\\\b'|'42'|NULL"
    );
    s.execute("CREATE TABLE q (id int, v text)").unwrap();
    s.execute("INSERT INTO q VALUES (1, 'a'), (2, NULL), (3, 'c')").unwrap();
    let out = common::copy_out(&mut s, "COPY (SELECT id * 10, v FROM q WHERE id < 3 ORDER BY id) TO STDOUT (FORMAT csv, HEADER)");
    assert_eq!(String::from_utf8(out).unwrap(), "?column?,v\n10,a\n20,\n");
    let bin = common::copy_out(&mut s, "COPY (SELECT id, v FROM q ORDER BY id) TO STDOUT (FORMAT binary)");
    s.execute("CREATE TABLE q2 (id int, v text)").unwrap();
    common::copy_in(&mut s, "COPY q2 FROM STDIN (FORMAT binary)", &bin).unwrap();
    assert_eq!(rows(&mut s, "SELECT * FROM q2 ORDER BY id"), ["1|a", "2|NULL", "3|c"]);
    assert_eq!(code(&mut s, "COPY (SELECT 1) FROM STDIN"), "42601");
}

/// The privilege functions: heapstore has no privileges, so every role may do everything, but
/// only to objects that exist, with privileges the object has (PostgreSQL 15's answers).
#[test]
fn privilege_functions_check_what_they_are_asked_about() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE acct (id int PRIMARY KEY, owner text)").unwrap();
    assert_eq!(one(&mut s, "SELECT has_table_privilege('acct', 'SELECT, INSERT')"), "t");
    assert_eq!(one(&mut s, "SELECT has_table_privilege('postgres', 'acct', 'update with grant option')"), "t");
    assert_eq!(one(&mut s, "SELECT has_table_privilege('pg_class', 'select')"), "t");
    assert_eq!(one(&mut s, "SELECT has_table_privilege(oid, 'select') FROM pg_class WHERE relname = 'acct'"), "t");
    assert_eq!(one(&mut s, "SELECT has_table_privilege(123456789::oid, 'select')"), "NULL");
    assert_eq!(code(&mut s, "SELECT has_table_privilege('nosuch', 'select')"), "42P01");
    assert_eq!(code(&mut s, "SELECT has_table_privilege('acct', 'fly')"), "22023");
    assert_eq!(code(&mut s, "SELECT has_table_privilege('nobody', 'acct', 'select')"), "42704");
    assert_eq!(one(&mut s, "SELECT has_column_privilege('acct', 'owner', 'update')"), "t");
    assert_eq!(code(&mut s, "SELECT has_column_privilege('acct', 'nosuch', 'select')"), "42703");
    assert_eq!(code(&mut s, "SELECT has_column_privilege('acct', 'owner', 'delete')"), "22023");
    assert_eq!(one(&mut s, "SELECT has_schema_privilege('public', 'usage')"), "t");
    assert_eq!(code(&mut s, "SELECT has_schema_privilege('nosuch', 'usage')"), "3F000");
    assert_eq!(one(&mut s, "SELECT has_database_privilege(current_database(), 'connect')"), "t");
    assert_eq!(one(&mut s, "SELECT has_database_privilege(999999::oid, 'connect')"), "NULL");
    assert_eq!(code(&mut s, "SELECT has_database_privilege('nosuch', 'connect')"), "3D000");
    drop(s);
    db.close().unwrap();
}

/// pg_settings shows a memory or time setting in its base unit, with the unit, type and the
/// values an enum setting takes, as PostgreSQL does.
#[test]
fn pg_settings_has_units_types_and_enum_values() {
    let (_d, _p, db) = common::new_db(&[]);
    let mut s = db.session();
    assert_eq!(one(&mut s, "SELECT setting, unit, vartype FROM pg_settings WHERE name = 'work_mem'"), "4096|kB|integer");
    assert_eq!(one(&mut s, "SELECT setting, unit FROM pg_settings WHERE name = 'shared_buffers'"), "16384|8kB");
    assert_eq!(one(&mut s, "SELECT vartype, enumvals FROM pg_settings WHERE name = 'wal_level'"), "enum|{minimal,replica}");
    assert_eq!(one(&mut s, "SELECT vartype FROM pg_settings WHERE name = 'fsync'"), "bool");
    s.execute("SET work_mem = '1MB'").unwrap();
    assert_eq!(one(&mut s, "SELECT setting, current_setting('work_mem') FROM pg_settings WHERE name = 'work_mem'"), "1024|1MB");
    drop(s);
    db.close().unwrap();
}

/// pg_settings says where each value came from (never an invented source): the built-in
/// default, the configuration file (`init --set`), the command line (`--set`, or the
/// settings given to `Database::open`), or the session's SET; with the built-in value and
/// the one RESET returns to.
#[test]
fn pg_settings_sources_are_true() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("data");
    heapstore::Database::init(&dir, &["checkpoint_timeout=10min".to_string()]).unwrap();
    let db = heapstore::Database::open(&dir, &["deadlock_timeout=50ms".to_string()]).unwrap();
    let mut s = db.session();
    let q = |s: &mut Session, name: &str| {
        one(s, &format!("SELECT context, source, setting, boot_val, reset_val FROM pg_settings WHERE name = '{name}'"))
    };
    assert_eq!(q(&mut s, "checkpoint_timeout"), "postmaster|configuration file|600|300|600");
    assert_eq!(q(&mut s, "deadlock_timeout"), "postmaster|command line|50|1000|50");
    assert_eq!(q(&mut s, "shared_buffers"), "postmaster|default|16384|16384|16384");
    assert_eq!(q(&mut s, "work_mem"), "user|default|4096|4096|4096");
    s.execute("SET work_mem = '8MB'").unwrap();
    assert_eq!(q(&mut s, "work_mem"), "user|session|8192|4096|4096");
    s.execute("RESET work_mem").unwrap();
    assert_eq!(q(&mut s, "work_mem"), "user|default|4096|4096|4096");
    assert_eq!(q(&mut s, "max_index_keys"), "internal|default|32|32|32");
    // A planner setting SET in the session, and one fixed at init.
    assert_eq!(q(&mut s, "enable_seqscan"), "user|default|on|on|on");
    s.execute("SET enable_seqscan = off").unwrap();
    assert_eq!(q(&mut s, "enable_seqscan"), "user|session|off|on|on");
    assert_eq!(one(&mut s, "SELECT context FROM pg_settings WHERE name = 'block_size'"), "internal");
    drop(s);
    db.close().unwrap();
}

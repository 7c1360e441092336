//! Conformance with PostgreSQL 15's COPY files (tests/fixtures/postgres, written by a real
//! server): they load, and COPY TO gives back the same bytes, before and after a restart; the
//! malformed files are refused with PostgreSQL's facts and leave nothing behind.

mod common;
use common::*;
use heapstore::Database;
use std::process::Command;

const FORMATS: [(&str, &str); 3] =
    [("types.text", ""), ("types.csv", " WITH (FORMAT csv, HEADER true)"), ("types.bin", " WITH (FORMAT binary)")];

#[test]
fn fixtures_round_trip_byte_for_byte_and_survive_restart() {
    let (_t, dir, db) = new_db(&["shared_buffers=2MB"]);
    let mut s = db.session();
    for (i, (file, opts)) in FORMATS.iter().enumerate() {
        s.execute(&format!("CREATE TABLE types{i} ({TYPES_COLUMNS})")).unwrap();
        let data = std::fs::read(fixture(file)).unwrap();
        let r = copy_in(&mut s, &format!("COPY types{i} FROM STDIN{opts}"), &data).unwrap();
        assert_eq!(r[0].tag, "COPY 5000", "{file}");
        let out = copy_out(&mut s, &format!("COPY types{i} TO STDOUT{opts}"));
        assert!(out == data, "{file}: COPY TO differs from the PostgreSQL file");
    }
    drop(s);
    db.close().unwrap();
    let db = Database::open(&dir, &[]).unwrap();
    let mut s = db.session();
    for (i, (file, opts)) in FORMATS.iter().enumerate() {
        let data = std::fs::read(fixture(file)).unwrap();
        let out = copy_out(&mut s, &format!("COPY types{i} TO STDOUT{opts}"));
        assert!(out == data, "{file}: differs after restart");
    }
    // Cross-format: text in, csv and binary out equal PostgreSQL's csv and binary.
    let csv = copy_out(&mut s, "COPY types0 TO STDOUT WITH (FORMAT csv, HEADER true)");
    assert!(csv == std::fs::read(fixture("types.csv")).unwrap());
    let binary = copy_out(&mut s, "COPY types0 TO STDOUT WITH (FORMAT binary)");
    assert!(binary == std::fs::read(fixture("types.bin")).unwrap());
}

/// (file, COPY options, facts the error must carry)
fn bad_cases() -> Vec<(&'static str, &'static str, Vec<&'static str>)> {
    vec![
        ("bad_bool.text", "", vec!["invalid input syntax for type boolean: \"maybe\"", "COPY types, line 3, column flag: \"maybe\""]),
        ("bad_date.text", "", vec!["date/time field value out of range: \"2024-02-30\"", "COPY types, line 3, column day: \"2024-02-30\""]),
        ("bad_escape_bytea.text", "", vec!["invalid hexadecimal digit: \"Z\"", "COPY types, line 3, column blob: \"\\xZZ\""]),
        ("bad_int.text", "", vec!["invalid input syntax for type smallint: \"abc\"", "COPY types, line 3, column small: \"abc\""]),
        ("bad_signature.bin", " WITH (FORMAT binary)", vec!["COPY file signature not recognized"]),
        ("bad_utf8.text", "", vec!["invalid byte sequence for encoding \"UTF8\": 0xff", "COPY types, line 3"]),
        ("missing_columns.text", "", vec!["missing data for column \"r8\"", "COPY types, line 3: \"3\tf\t-32656\t-492036692717\t-405743.03\""]),
        ("null_in_not_null.text", "", vec![
            "null value in column \"id\" of relation \"types\" violates not-null constraint",
            "Failing row contains (null, f, -32656, -492036692717, -405743.03, -286135595.13566923, eccbc87e4b5ce2fe28308fd9f2a7baf3 ddd, 45c4, 9bf         , \\x3c59dc048e8850243be8079a5c74d079182be0c5cdcd5072bb1864cdee4d3d..., 2010-04-15, 1990-01-04 15:16:27.000003).",
            "COPY types, line 3: \"\\N\tf\t-32656",
        ]),
        ("smallint_range.text", "", vec!["value \"40000\" is out of range for type smallint", "COPY types, line 3, column small: \"40000\""]),
        ("too_many_columns.text", "", vec!["extra data after last expected column", "COPY types, line 3: \"3\tf\t-32656"]),
        ("truncated.bin", " WITH (FORMAT binary)", vec!["unexpected EOF in COPY data", "COPY types, line 27, column flag"]),
        ("unterminated_quote.csv", " WITH (FORMAT csv, HEADER true)", vec!["unterminated CSV quoted field", "COPY types, line 5: \"3,f,1,2,3,4,\"never closed\n\""]),
        ("varchar_too_long.text", "", vec!["value too long for type character varying(16)", "COPY types, line 3, column code: \"xxxxxxxxxxxxxxxxx\""]),
    ]
}

#[test]
fn bad_files_are_refused_with_postgres_facts_and_leave_nothing() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute(&format!("CREATE TABLE types ({TYPES_COLUMNS})")).unwrap();
    copy_in(&mut s, "COPY types FROM STDIN", &std::fs::read(fixture("types.text")).unwrap()).unwrap();
    for (file, opts, facts) in bad_cases() {
        let data = std::fs::read(fixture(&format!("bad/{file}"))).unwrap();
        let e = copy_in(&mut s, &format!("COPY types FROM STDIN{opts}"), &data).unwrap_err();
        let shown = e.to_string();
        for f in &facts {
            assert!(shown.contains(f), "{file}: error lacks {f:?}\n{shown}");
        }
        assert_eq!(count(&mut s, "types"), 5000, "{file}: a failed COPY left rows behind");
    }
    // The table is still fully usable.
    let out = copy_out(&mut s, "COPY types TO STDOUT");
    assert!(out == std::fs::read(fixture("types.text")).unwrap());
}

#[test]
fn cli_refuses_bad_file_with_nonzero_exit_and_error_on_stderr() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("d");
    let ok = Command::new(bin()).arg("-D").arg(&dir).arg("init").output().unwrap();
    assert!(ok.status.success());
    let c = Command::new(bin()).arg("-D").arg(&dir).arg("-c").arg(format!("CREATE TABLE types ({TYPES_COLUMNS})")).output().unwrap();
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    let path = fixture("bad/bad_bool.text");
    let out = Command::new(bin()).arg("-D").arg(&dir).arg("-c").arg(format!("COPY types FROM '{}'", path.display())).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ERROR:  invalid input syntax for type boolean: \"maybe\""), "{err}");
    assert!(err.contains("CONTEXT:  COPY types, line 3, column flag: \"maybe\""), "{err}");
    let n = Command::new(bin()).arg("-D").arg(&dir).args(["-At", "-c", "SELECT count(*) FROM types"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&n.stdout), "0\n");
}

/// jsonb through COPY: PostgreSQL 15 loaded `jsonb.in` (keys out of order, repeated
/// keys, escapes, numbers in exponent form, multi-byte text) and wrote the `.text`, `.csv` and
/// `.bin` files; heapstore, loading the same input, writes the same bytes in each format, and
/// loads PostgreSQL's binary file back to the same text. A malformed document fails with
/// PostgreSQL's message, DETAIL and both CONTEXT lines (the JSON position, then the COPY
/// line and column), and leaves nothing behind.
#[test]
fn jsonb_copy_matches_postgres_byte_for_byte() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE cj (id int, j jsonb)").unwrap();
    let input = std::fs::read(fixture("jsonb.in")).unwrap();
    copy_in(&mut s, "COPY cj FROM STDIN", &input).unwrap();
    for (file, opts) in [("jsonb.text", ""), ("jsonb.csv", " WITH (FORMAT csv, HEADER true)"), ("jsonb.bin", " WITH (FORMAT binary)")] {
        let out = copy_out(&mut s, &format!("COPY cj TO STDOUT{opts}"));
        assert!(out == std::fs::read(fixture(file)).unwrap(), "{file}: COPY TO differs from PostgreSQL's");
    }
    s.execute("CREATE TABLE cj2 (id int, j jsonb)").unwrap();
    copy_in(&mut s, "COPY cj2 FROM STDIN WITH (FORMAT binary)", &std::fs::read(fixture("jsonb.bin")).unwrap()).unwrap();
    assert!(copy_out(&mut s, "COPY cj2 TO STDOUT") == std::fs::read(fixture("jsonb.text")).unwrap());
    let e = copy_in(&mut s, "COPY cj2 FROM STDIN", b"21\t{\"a\":1}\n22\t{a}\n").unwrap_err();
    assert_eq!(e.code, "22P02");
    assert_eq!(e.message, "invalid input syntax for type json");
    assert_eq!(e.detail.as_deref(), Some("Token \"a\" is invalid."));
    assert_eq!(e.context.as_deref(), Some("JSON data, line 1: {a...\nCOPY cj2, line 2, column j: \"{a}\""));
    assert_eq!(count(&mut s, "cj2"), 20);
}

/// COPY's CSV FORCE options, as PostgreSQL 15 reads and writes them (outputs taken from it):
/// FORCE_NOT_NULL, FORCE_NULL (also with a NULL string of its own), the legacy
/// `CSV FORCE NOT NULL`, FORCE_QUOTE of some columns, of `*` and of a query's output column,
/// and PostgreSQL's errors for the misuses.
#[test]
fn csv_force_options_match_postgres() {
    let (_t, _dir, db) = new_db(&[]);
    let mut s = db.session();
    s.execute("CREATE TABLE c5 (id int, name text, note text)").unwrap();
    copy_in(&mut s, "COPY c5 FROM STDIN WITH (FORMAT csv, FORCE_NULL (name), QUOTE '''')", b"1,'',''\n2,,\n3,'x',\n").unwrap();
    copy_in(&mut s, "COPY c5 FROM STDIN WITH (FORMAT csv, FORCE_NOT_NULL (name, note))", b"4,,\n5,\"\",\"\"\n").unwrap();
    copy_in(
        &mut s,
        "COPY c5 FROM STDIN WITH (FORMAT csv, NULL 'NA', FORCE_NOT_NULL (note), FORCE_NULL (name, note))",
        b"6,NA,NA\n7,\"NA\",\"NA\"\n",
    )
    .unwrap();
    copy_in(&mut s, "COPY c5 FROM STDIN CSV FORCE NOT NULL name", b"8,,\n").unwrap();
    let out = |s: &mut heapstore::Session, sql: &str| String::from_utf8(copy_out(s, sql)).unwrap();
    assert_eq!(
        out(&mut s, "COPY c5 TO STDOUT WITH (FORMAT csv, FORCE_QUOTE (name))"),
        "1,,\"\"\n2,,\n3,\"x\",\n4,\"\",\"\"\n5,\"\",\"\"\n6,,NA\n7,,\n8,\"\",\n"
    );
    assert_eq!(
        out(&mut s, "COPY c5 (id, note) TO STDOUT WITH (FORMAT csv, FORCE_QUOTE *, DELIMITER ';')"),
        "\"1\";\"\"\n\"2\";\n\"3\";\n\"4\";\"\"\n\"5\";\"\"\n\"6\";\"NA\"\n\"7\";\n\"8\";\n"
    );
    assert_eq!(
        out(&mut s, "COPY c5 TO STDOUT CSV HEADER FORCE QUOTE id, note"),
        "id,name,note\n\"1\",,\"\"\n\"2\",,\n\"3\",x,\n\"4\",\"\",\"\"\n\"5\",\"\",\"\"\n\"6\",,\"NA\"\n\"7\",,\n\"8\",\"\",\n"
    );
    assert_eq!(
        out(&mut s, "COPY (SELECT id, name AS nm FROM c5 WHERE id < 3 ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER, FORCE_QUOTE (nm))"),
        "id,nm\n1,\n2,\n"
    );
    let code = |s: &mut heapstore::Session, sql: &str| {
        let e = copy_in(s, sql, b"").unwrap_err();
        (e.code, e.message.clone())
    };
    let cases = [
        ("COPY c5 TO STDOUT WITH (FORCE_QUOTE (name))", "0A000", "COPY force quote available only in CSV mode"),
        ("COPY c5 TO STDOUT WITH (FORMAT csv, FORCE_NOT_NULL (name))", "0A000", "COPY force not null only available using COPY FROM"),
        ("COPY c5 FROM STDIN WITH (FORMAT csv, FORCE_QUOTE (name))", "0A000", "COPY force quote only available using COPY TO"),
        ("COPY c5 TO STDOUT WITH (FORMAT csv, FORCE_QUOTE (zz))", "42703", "column \"zz\" of relation \"c5\" does not exist"),
        ("COPY c5 (id) TO STDOUT WITH (FORMAT csv, FORCE_QUOTE (name))", "42P10", "FORCE_QUOTE column \"name\" not referenced by COPY"),
        ("COPY c5 (id) FROM STDIN WITH (FORMAT csv, FORCE_NULL (name))", "42P10", "FORCE_NULL column \"name\" not referenced by COPY"),
        (
            "COPY c5 FROM STDIN WITH (FORMAT csv, FORCE_NOT_NULL *)",
            "22023",
            "argument to option \"force_not_null\" must be a list of column names",
        ),
        ("COPY c5 TO STDOUT WITH (FORMAT csv, FORCE_QUOTE (name), FORCE_QUOTE (id))", "42601", "conflicting or redundant options"),
        ("COPY (SELECT 1 AS a) TO STDOUT WITH (FORMAT csv, FORCE_QUOTE (zz))", "42703", "column \"zz\" does not exist"),
    ];
    for (sql, c, m) in cases {
        assert_eq!(code(&mut s, sql), (c, m.to_string()), "{sql}");
    }
}

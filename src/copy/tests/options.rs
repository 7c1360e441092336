//! COPY options: defaults and PostgreSQL's validation messages.

use super::*;
use crate::error::sqlstate;

fn option_error(pairs: Pairs) -> (&'static str, String) {
    let pairs: Vec<(String, Option<String>)> = pairs.iter().map(|(k, v)| (k.to_string(), v.map(str::to_string))).collect();
    let err = CopyOptions::from_pairs(&pairs).unwrap_err();
    (err.code, err.message.clone())
}

#[test]
fn option_defaults() {
    let t = opts(&[]);
    assert_eq!((t.format, t.delimiter, t.null.as_str(), t.header), (CopyFormat::Text, b'\t', "\\N", false));
    let c = opts(&[("format", Some("csv")), ("quote", Some("'"))]);
    assert_eq!((c.delimiter, c.null.as_str(), c.quote, c.escape), (b',', "", b'\'', b'\''));
    let h = opts(&[("format", Some("csv")), ("header", None), ("encoding", Some("utf-8")), ("freeze", Some("off"))]);
    assert!(h.header);
    assert!(!opts(&[("header", Some("OFF"))]).header);
}

#[test]
fn option_errors_match_postgres() {
    let syntax = sqlstate::SYNTAX_ERROR;
    let feature = sqlstate::FEATURE_NOT_SUPPORTED;
    let invalid = sqlstate::INVALID_PARAMETER_VALUE;
    let cases: &[(Pairs, &str, &str)] = &[
        (&[("delimiter", Some("||"))], feature, "COPY delimiter must be a single one-byte character"),
        (&[("delimiter", Some("é"))], feature, "COPY delimiter must be a single one-byte character"),
        (&[("format", Some("binary")), ("delimiter", Some(","))], syntax, "cannot specify DELIMITER in BINARY mode"),
        (&[("format", Some("binary")), ("null", Some(""))], syntax, "cannot specify NULL in BINARY mode"),
        (&[("format", Some("binary")), ("header", Some("true"))], feature, "cannot specify HEADER in BINARY mode"),
        (&[("quote", Some("'"))], feature, "COPY quote available only in CSV mode"),
        (&[("escape", Some("'"))], feature, "COPY escape available only in CSV mode"),
        (&[("format", Some("csv")), ("quote", Some("''"))], feature, "COPY quote must be a single one-byte character"),
        (&[("format", Some("csv")), ("escape", Some(""))], feature, "COPY escape must be a single one-byte character"),
        (&[("format", Some("csv")), ("format", Some("csv"))], syntax, "conflicting or redundant options"),
        (&[("null", Some("a")), ("null", Some("b"))], syntax, "conflicting or redundant options"),
        (&[("format", Some("xml"))], invalid, "COPY format \"xml\" not recognized"),
        (&[("format", None)], syntax, "format requires a parameter"),
        (&[("header", Some("maybe"))], syntax, "header requires a Boolean value or \"match\""),
        (&[("header", Some("match"))], feature, "COPY HEADER MATCH is not supported"),
        (&[("delimiter", Some("a"))], invalid, "COPY delimiter cannot be \"a\""),
        (&[("delimiter", Some("\n"))], invalid, "COPY delimiter cannot be newline or carriage return"),
        (&[("null", Some("a\rb"))], invalid, "COPY null representation cannot use newline or carriage return"),
        (&[("format", Some("csv")), ("delimiter", Some("\""))], invalid, "COPY delimiter and quote must be different"),
        (&[("null", Some("a\tb"))], feature, "COPY delimiter must not appear in the NULL specification"),
        (&[("format", Some("csv")), ("null", Some("\"\""))], feature, "CSV quote character must not appear in the NULL specification"),
        (&[("encoding", Some("LATIN1"))], feature, "COPY ENCODING \"LATIN1\" is not supported"),
        (&[("encoding", Some("klingon"))], invalid, "argument to option \"encoding\" must be a valid encoding name"),
        (&[("freeze", Some("perhaps"))], syntax, "freeze requires a Boolean value"),
        (&[("force_quote", None)], invalid, "argument to option \"force_quote\" must be a list of column names"),
        (&[("oids", Some("true"))], syntax, "option \"oids\" not recognized"),
    ];
    for (pairs, code, message) in cases {
        assert_eq!(option_error(pairs), (*code, message.to_string()), "{pairs:?}");
    }
    // A letter is a fine CSV delimiter.
    assert_eq!(opts(&[("format", Some("csv")), ("delimiter", Some("a"))]).delimiter, b'a');
}

#[test]
fn force_options_are_checked_as_postgres_does() {
    use crate::copy::ForceOptions;
    let csv = vec![("format".to_string(), Some("csv".to_string()))];
    let mut f = ForceOptions::default();
    f.set("force_quote", None).unwrap();
    assert_eq!(f.set("force_quote", Some(vec![])).unwrap_err().message, "conflicting or redundant options");
    let msg = |r: crate::error::Result<CopyOptions>| r.unwrap_err().message.clone();
    assert_eq!(msg(CopyOptions::with_forces(&[], &f, false)), "COPY force quote available only in CSV mode");
    assert_eq!(msg(CopyOptions::with_forces(&csv, &f, true)), "COPY force quote only available using COPY TO");
    let mut o = CopyOptions::with_forces(&csv, &f, false).unwrap();
    f.resolve(&mut o, &["a".into(), "b".into()], |_| Ok(())).unwrap();
    assert_eq!(o.force_quote, [true, true]);

    let mut g = ForceOptions::default();
    g.set("force_not_null", Some(vec!["b".into()])).unwrap();
    let star = g.set("force_null", None).unwrap_err();
    assert_eq!((star.code, star.message.as_str()), ("22023", "argument to option \"force_null\" must be a list of column names"));
    assert_eq!(msg(CopyOptions::with_forces(&csv, &g, false)), "COPY force not null only available using COPY FROM");
    let mut o = CopyOptions::with_forces(&csv, &g, true).unwrap();
    let e = g.resolve(&mut o, &["a".into()], |_| Ok(())).unwrap_err();
    assert_eq!((e.code, e.message.as_str()), ("42P10", "FORCE_NOT_NULL column \"b\" not referenced by COPY"));
    g.resolve(&mut o, &["a".into(), "b".into()], |_| Ok(())).unwrap();
    assert_eq!((o.force_not_null.as_slice(), o.force_null.as_slice()), (&[false, true][..], &[][..]));
}

//! `json`: text that is valid JSON, kept exactly as written (PostgreSQL's json keeps white
//! space, key order and duplicate keys; it only checks the syntax). Input runs PostgreSQL's
//! checks with its error texts (22P02 `invalid input syntax for type json`, a DETAIL naming
//! the token, a CONTEXT with the text up to it); output and the binary form are the text.
//!
//! Also the conversion of SQL values to JSON that `json_build_object` / `json_build_array`
//! use (PostgreSQL's `datum_to_json`): numbers and booleans as themselves (NaN and the
//! infinities quoted), dates and timestamps in ISO 8601 with a `T`, arrays as JSON arrays,
//! json as is, everything else its text output as a JSON string.

use super::{SqlType, TypeId, Value};
use crate::error::{sqlstate, PgError, Result};

fn syntax_error(input: &str, upto: usize, detail: String) -> PgError {
    // CONTEXT: the line holding the error, from its start to the end of the offending token.
    let upto = upto.min(input.len());
    let line_start = input[..upto].rfind('\n').map_or(0, |i| i + 1);
    let line_no = input[..upto].matches('\n').count() + 1;
    let mut ctx = format!("JSON data, line {line_no}: {}", &input[line_start..upto]);
    if upto < input.len() {
        ctx.push_str("...");
    }
    PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "invalid input syntax for type json").with_detail(detail).with_context(ctx)
}

struct Lexer<'a> {
    s: &'a str,
    b: &'a [u8],
    p: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tok {
    ObjStart,
    ObjEnd,
    ArrStart,
    ArrEnd,
    Comma,
    Colon,
    Str,
    Num,
    True,
    False,
    Null,
    End,
}

impl<'a> Lexer<'a> {
    fn skip_ws(&mut self) {
        while self.p < self.b.len() && matches!(self.b[self.p], b' ' | b'\t' | b'\n' | b'\r') {
            self.p += 1;
        }
    }

    /// The next token and where it starts.
    fn next(&mut self) -> Result<(Tok, usize)> {
        self.skip_ws();
        let start = self.p;
        let Some(&c) = self.b.get(self.p) else { return Ok((Tok::End, start)) };
        let single = |t: Tok, l: &mut Self| {
            l.p += 1;
            Ok((t, start))
        };
        match c {
            b'{' => single(Tok::ObjStart, self),
            b'}' => single(Tok::ObjEnd, self),
            b'[' => single(Tok::ArrStart, self),
            b']' => single(Tok::ArrEnd, self),
            b',' => single(Tok::Comma, self),
            b':' => single(Tok::Colon, self),
            b'"' => {
                self.string()?;
                Ok((Tok::Str, start))
            }
            b'-' | b'0'..=b'9' => {
                self.number(start)?;
                Ok((Tok::Num, start))
            }
            _ => {
                // A word: true, false, null, or an invalid token (reported whole).
                let end = self.word_end(start);
                self.p = end;
                match &self.s[start..end] {
                    "true" => Ok((Tok::True, start)),
                    "false" => Ok((Tok::False, start)),
                    "null" => Ok((Tok::Null, start)),
                    w => Err(syntax_error(self.s, end, format!("Token \"{w}\" is invalid."))),
                }
            }
        }
    }

    /// The end of a run of characters that are not JSON punctuation or white space.
    fn word_end(&self, start: usize) -> usize {
        let mut e = start;
        while e < self.b.len() && !matches!(self.b[e], b'{' | b'}' | b'[' | b']' | b',' | b':' | b'"' | b' ' | b'\t' | b'\n' | b'\r') {
            e += 1;
        }
        // Whole characters only.
        if e == start {
            e = start + self.s[start..].chars().next().map_or(1, char::len_utf8);
        }
        e
    }

    fn string(&mut self) -> Result<()> {
        let start = self.p;
        self.p += 1;
        loop {
            let Some(&c) = self.b.get(self.p) else {
                // An unterminated string is an invalid token, all of it.
                return Err(syntax_error(self.s, self.s.len(), format!("Token \"{}\" is invalid.", &self.s[start..])));
            };
            match c {
                b'"' => {
                    self.p += 1;
                    return Ok(());
                }
                b'\\' => {
                    let Some(&e) = self.b.get(self.p + 1) else {
                        return Err(syntax_error(self.s, self.s.len(), "The input string ended unexpectedly.".into()));
                    };
                    match e {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.p += 2,
                        b'u' => {
                            let hex = self.b.get(self.p + 2..self.p + 6);
                            if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                                let end = (self.p + 6).min(self.s.len());
                                return Err(syntax_error(self.s, end, "\"\\u\" must be followed by four hexadecimal digits.".into()));
                            }
                            self.p += 6;
                        }
                        _ => {
                            let len = self.s[self.p + 1..].chars().next().map_or(1, char::len_utf8);
                            let end = self.p + 1 + len;
                            return Err(syntax_error(
                                self.s,
                                end,
                                format!("Escape sequence \"\\{}\" is invalid.", &self.s[self.p + 1..end]),
                            ));
                        }
                    }
                }
                c if c < 0x20 => {
                    return Err(syntax_error(self.s, self.p, format!("Character with value 0x{c:02x} must be escaped.")));
                }
                _ => self.p += 1,
            }
        }
    }

    /// A number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self, start: usize) -> Result<()> {
        let b = self.b;
        let mut p = start;
        if b[p] == b'-' {
            p += 1;
        }
        let digits = |p: &mut usize| {
            let s = *p;
            while *p < b.len() && b[*p].is_ascii_digit() {
                *p += 1;
            }
            *p > s
        };
        let mut ok = if b.get(p) == Some(&b'0') {
            p += 1;
            true
        } else {
            digits(&mut p)
        };
        if ok && b.get(p) == Some(&b'.') {
            p += 1;
            ok = digits(&mut p);
        }
        if ok && matches!(b.get(p), Some(b'e' | b'E')) {
            p += 1;
            if matches!(b.get(p), Some(b'+' | b'-')) {
                p += 1;
            }
            ok = digits(&mut p);
        }
        // A number must end at punctuation, white space or the end.
        let end = self.word_end(p.max(start + 1).min(b.len()));
        let end = if p < b.len() && !matches!(b[p], b'{' | b'}' | b'[' | b']' | b',' | b':' | b'"' | b' ' | b'\t' | b'\n' | b'\r') {
            ok = false;
            end
        } else {
            p
        };
        if !ok {
            let end = end.max(self.word_end(start));
            return Err(syntax_error(self.s, end, format!("Token \"{}\" is invalid.", &self.s[start..end])));
        }
        self.p = p;
        Ok(())
    }
}

fn shown(l: &Lexer<'_>, t: Tok, at: usize) -> String {
    match t {
        Tok::End => String::new(),
        _ => l.s[at..l.p].to_string(),
    }
}

/// Checks that `s` is one JSON value (PostgreSQL's `json_in`).
pub fn validate(s: &str) -> Result<()> {
    let mut l = Lexer { s, b: s.as_bytes(), p: 0 };
    let ended = |l: &Lexer<'_>| syntax_error(l.s, l.s.len(), "The input string ended unexpectedly.".into());
    // An explicit stack keeps deeply nested input from overflowing the thread's stack.
    #[derive(Clone, Copy)]
    enum Ctx {
        Array,
        Object,
    }
    let mut stack: Vec<Ctx> = Vec::new();
    let mut expect_value = true;
    let (mut t, mut at) = l.next()?;
    loop {
        if expect_value {
            match t {
                Tok::ArrStart => {
                    stack.push(Ctx::Array);
                    (t, at) = l.next()?;
                    if t == Tok::ArrEnd {
                        stack.pop();
                        expect_value = false;
                        (t, at) = l.next()?;
                    }
                    continue;
                }
                Tok::ObjStart => {
                    stack.push(Ctx::Object);
                    (t, at) = l.next()?;
                    if t == Tok::ObjEnd {
                        stack.pop();
                        expect_value = false;
                        (t, at) = l.next()?;
                        continue;
                    }
                    // A key, then a colon.
                    match t {
                        Tok::Str => {}
                        Tok::End => return Err(ended(&l)),
                        _ => return Err(syntax_error(l.s, l.p, format!("Expected string or \"}}\", but found \"{}\".", shown(&l, t, at)))),
                    }
                    (t, at) = l.next()?;
                    if t != Tok::Colon {
                        if t == Tok::End {
                            return Err(ended(&l));
                        }
                        return Err(syntax_error(l.s, l.p, format!("Expected \":\", but found \"{}\".", shown(&l, t, at))));
                    }
                    (t, at) = l.next()?;
                    continue;
                }
                Tok::Str | Tok::Num | Tok::True | Tok::False | Tok::Null => {
                    expect_value = false;
                    (t, at) = l.next()?;
                    continue;
                }
                Tok::End => return Err(ended(&l)),
                _ => return Err(syntax_error(l.s, l.p, format!("Expected JSON value, but found \"{}\".", shown(&l, t, at)))),
            }
        }
        // After a value: the end of the input, or a separator or closer of the enclosing one.
        match (stack.last(), t) {
            (None, Tok::End) => return Ok(()),
            (None, _) => return Err(syntax_error(l.s, l.p, format!("Expected end of input, but found \"{}\".", shown(&l, t, at)))),
            (Some(_), Tok::End) => return Err(ended(&l)),
            (Some(Ctx::Array), Tok::Comma) => {
                expect_value = true;
                (t, at) = l.next()?;
            }
            (Some(Ctx::Array), Tok::ArrEnd) | (Some(Ctx::Object), Tok::ObjEnd) => {
                stack.pop();
                (t, at) = l.next()?;
            }
            (Some(Ctx::Array), _) => {
                return Err(syntax_error(l.s, l.p, format!("Expected \",\" or \"]\", but found \"{}\".", shown(&l, t, at))))
            }
            (Some(Ctx::Object), Tok::Comma) => {
                (t, at) = l.next()?;
                match t {
                    Tok::Str => {}
                    Tok::End => return Err(ended(&l)),
                    _ => return Err(syntax_error(l.s, l.p, format!("Expected string, but found \"{}\".", shown(&l, t, at)))),
                }
                (t, at) = l.next()?;
                if t != Tok::Colon {
                    if t == Tok::End {
                        return Err(ended(&l));
                    }
                    return Err(syntax_error(l.s, l.p, format!("Expected \":\", but found \"{}\".", shown(&l, t, at))));
                }
                expect_value = true;
                (t, at) = l.next()?;
            }
            (Some(Ctx::Object), _) => {
                return Err(syntax_error(l.s, l.p, format!("Expected \",\" or \"}}\", but found \"{}\".", shown(&l, t, at))))
            }
        }
    }
}

/// Appends `s` as a JSON string (PostgreSQL's `escape_json`).
pub fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends the JSON form of `v` (of type `ty`) as `datum_to_json` makes it.
pub fn to_json(v: &Value, ty: &SqlType, out: &mut String) {
    let text = |v: &Value| v.to_text(&v.natural_type().unwrap_or(*ty)).unwrap_or_default();
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) | Value::Oid(_) => out.push_str(&text(v)),
        Value::Float4(_) | Value::Float8(_) | Value::Numeric(_) => {
            let t = text(v);
            if matches!(t.as_str(), "NaN" | "Infinity" | "-Infinity") {
                quote(&t, out);
            } else {
                out.push_str(&t);
            }
        }
        Value::Json(j) => out.push_str(j),
        Value::Date(d) => match *d {
            i32::MIN => quote("-infinity", out),
            i32::MAX => quote("infinity", out),
            _ => quote(&text(v), out),
        },
        Value::Timestamp(t) | Value::Timestamptz(t) => match *t {
            i64::MIN => quote("-infinity", out),
            i64::MAX => quote("infinity", out),
            _ => {
                // ISO 8601 (XSD): a T between date and time; timestamptz with its offset.
                let s = text(v).replacen(' ', "T", 1);
                let s = if matches!(v, Value::Timestamptz(_)) && s.ends_with("+00") { format!("{s}:00") } else { s };
                quote(&s, out);
            }
        },
        Value::Array(a) => array_to_json(a, out),
        Value::Text(s) => quote(s, out),
        other => quote(&text(other), out),
    }
}

/// A (possibly multidimensional) array as nested JSON arrays, elements separated by `,`.
fn array_to_json(a: &super::Array, out: &mut String) {
    if a.items.is_empty() {
        out.push_str("[]");
        return;
    }
    let elem = a.elem();
    let dims: Vec<usize> = a.dims.iter().map(|d| d.len as usize).collect();
    fn level(items: &[Value], dims: &[usize], elem: &SqlType, out: &mut String) {
        out.push('[');
        let step = dims[1..].iter().product::<usize>();
        for i in 0..dims[0] {
            if i > 0 {
                out.push(',');
            }
            if dims.len() == 1 {
                to_json(&items[i], elem, out);
            } else {
                level(&items[i * step..(i + 1) * step], &dims[1..], elem, out);
            }
        }
        out.push(']');
    }
    level(&a.items, &dims, &elem, out);
}

/// `json_build_object(k1, v1, ...)`: `{"k1" : v1, ...}`.
pub fn build_object(args: &[(Value, SqlType)]) -> Result<Value> {
    if args.len() % 2 != 0 {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "argument list must have even number of elements")
            .with_hint("The arguments of json_build_object() must consist of alternating keys and values."));
    }
    let mut out = String::from("{");
    for (i, pair) in args.chunks(2).enumerate() {
        if pair[0].0 == Value::Null {
            return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("argument {} cannot be null", 2 * i + 1))
                .with_hint("Object keys should be text."));
        }
        if i > 0 {
            out.push_str(", ");
        }
        let key = pair[0].0.to_text(&pair[0].1).unwrap_or_default();
        quote(&key, &mut out);
        out.push_str(" : ");
        to_json(&pair[1].0, &pair[1].1, &mut out);
    }
    out.push('}');
    Ok(Value::Json(out))
}

/// `json_build_array(v1, ...)`: `[v1, v2, ...]`.
pub fn build_array(args: &[(Value, SqlType)]) -> Value {
    let mut out = String::from("[");
    for (i, (v, ty)) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        to_json(v, ty, &mut out);
    }
    out.push(']');
    Value::Json(out)
}

/// Whether a type is json (used where PostgreSQL has no equality operator for it).
pub fn is_json(ty: &SqlType) -> bool {
    ty.id == TypeId::Json
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> (String, String) {
        let e = validate(s).unwrap_err();
        (e.detail.map(|d| d.to_string()).unwrap_or_default(), e.context.map(|c| c.to_string()).unwrap_or_default())
    }

    #[test]
    fn input_is_checked_as_postgresql_does() {
        for ok in ["{}", "[]", "1", "-0.5e10", "\"a\\u00e9\"", " {\"a\": [1, 2.50, \"x\"], \"a\": null} ", "1e400", "[[[]]]", "true"] {
            validate(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
        // (input, DETAIL, CONTEXT) as PostgreSQL 15 gives them.
        let cases = [
            ("{a}", "Token \"a\" is invalid.", "JSON data, line 1: {a..."),
            ("[1,]", "Expected JSON value, but found \"]\".", "JSON data, line 1: [1,]"),
            ("[1 2]", "Expected \",\" or \"]\", but found \"2\".", "JSON data, line 1: [1 2..."),
            ("{\"a\" 1}", "Expected \":\", but found \"1\".", "JSON data, line 1: {\"a\" 1..."),
            ("{\"a\": 1,}", "Expected string, but found \"}\".", "JSON data, line 1: {\"a\": 1,}"),
            ("[1", "The input string ended unexpectedly.", "JSON data, line 1: [1"),
            ("1 2", "Expected end of input, but found \"2\".", "JSON data, line 1: 1 2"),
            ("01", "Token \"01\" is invalid.", "JSON data, line 1: 01"),
            ("\"\\q\"", "Escape sequence \"\\q\" is invalid.", "JSON data, line 1: \"\\q..."),
            ("", "The input string ended unexpectedly.", "JSON data, line 1: "),
            ("{\"a\":1 \"b\"}", "Expected \",\" or \"}\", but found \"\"b\"\".", "JSON data, line 1: {\"a\":1 \"b\"..."),
            ("{", "The input string ended unexpectedly.", "JSON data, line 1: {"),
            ("\"abc", "Token \"\"abc\" is invalid.", "JSON data, line 1: \"abc"),
            ("-", "Token \"-\" is invalid.", "JSON data, line 1: -"),
            ("1.", "Token \"1.\" is invalid.", "JSON data, line 1: 1."),
            ("1e", "Token \"1e\" is invalid.", "JSON data, line 1: 1e"),
            ("tru", "Token \"tru\" is invalid.", "JSON data, line 1: tru"),
            ("[true false]", "Expected \",\" or \"]\", but found \"false\".", "JSON data, line 1: [true false..."),
            ("{1:2}", "Expected string or \"}\", but found \"1\".", "JSON data, line 1: {1..."),
            ("[\n1,\nx]", "Token \"x\" is invalid.", "JSON data, line 3: x..."),
            ("\"a\tb\"", "Character with value 0x09 must be escaped.", "JSON data, line 1: \"a..."),
            ("1x", "Token \"1x\" is invalid.", "JSON data, line 1: 1x"),
        ];
        for (input, detail, context) in cases {
            assert_eq!(err(input), (detail.to_string(), context.to_string()), "{input:?}");
        }
    }
}

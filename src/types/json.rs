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
    // At most the last 49 bytes before it (whole characters; from the line's start when that
    // is at most 3 bytes more), with "..." where the excerpt is cut, as report_json_context.
    let upto = upto.min(input.len());
    let line_start = input[..upto].rfind('\n').map_or(0, |i| i + 1);
    let line_no = input[..upto].matches('\n').count() + 1;
    let mut start = line_start;
    while upto - start >= 50 {
        start += input[start..].chars().next().map_or(1, char::len_utf8);
    }
    if start - line_start <= 3 {
        start = line_start;
    }
    let prefix = if start > line_start { "..." } else { "" };
    let mut ctx = format!("JSON data, line {line_no}: {prefix}{}", &input[start..upto]);
    if upto < input.len() && !matches!(input.as_bytes()[upto], b'\n' | b'\r') {
        ctx.push_str("...");
    }
    PgError::new(sqlstate::INVALID_TEXT_REPRESENTATION, "invalid input syntax for type json").with_detail(detail).with_context(ctx)
}

struct Lexer<'a> {
    s: &'a str,
    b: &'a [u8],
    p: usize,
    /// De-escape strings into `strval` (PostgreSQL's lexer with `strval`: jsonb input and the
    /// json functions), which also checks surrogate pairs and refuses `\u0000`.
    decode: bool,
    strval: String,
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

    /// The end of a word for error reports: a run of ASCII letters, digits, `_` and non-ASCII
    /// bytes (PostgreSQL's JSON_ALPHANUMERIC_CHAR), or else the one byte at `start`.
    fn word_end(&self, start: usize) -> usize {
        let mut e = start;
        while e < self.b.len() && alnum(self.b[e]) {
            e += 1;
        }
        if e == start {
            e = (start + 1).min(self.b.len());
        }
        e
    }

    fn string(&mut self) -> Result<()> {
        let start = self.p;
        self.p += 1;
        self.strval.clear();
        // A high surrogate waiting for its low half; where the current run of plain bytes began.
        let mut hi: Option<u32> = None;
        let mut run = self.p;
        let low_expected = |s: &str, upto: usize| syntax_error(s, upto, "Unicode low surrogate must follow a high surrogate.".into());
        loop {
            let Some(&c) = self.b.get(self.p) else {
                // An unterminated string is an invalid token, all of it.
                return Err(syntax_error(self.s, self.s.len(), format!("Token \"{}\" is invalid.", &self.s[start..])));
            };
            match c {
                b'"' => {
                    if self.decode {
                        if hi.is_some() {
                            return Err(low_expected(self.s, self.p + 1));
                        }
                        self.strval.push_str(&self.s[run..self.p]);
                    }
                    self.p += 1;
                    return Ok(());
                }
                b'\\' => {
                    if self.decode {
                        self.strval.push_str(&self.s[run..self.p]);
                    }
                    let Some(&e) = self.b.get(self.p + 1) else {
                        return Err(syntax_error(self.s, self.s.len(), format!("Token \"{}\" is invalid.", &self.s[start..])));
                    };
                    match e {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                            if self.decode {
                                if hi.is_some() {
                                    return Err(low_expected(self.s, self.p + 2));
                                }
                                self.strval.push(match e {
                                    b'b' => '\u{8}',
                                    b'f' => '\u{c}',
                                    b'n' => '\n',
                                    b'r' => '\r',
                                    b't' => '\t',
                                    other => char::from(other),
                                });
                            }
                            self.p += 2;
                        }
                        b'u' => {
                            // Four hex digits: the input ending first is an invalid token; another
                            // character is reported through its end.
                            for i in self.p + 2..self.p + 6 {
                                match self.b.get(i) {
                                    None => {
                                        return Err(syntax_error(
                                            self.s,
                                            self.s.len(),
                                            format!("Token \"{}\" is invalid.", &self.s[start..]),
                                        ))
                                    }
                                    Some(h) if h.is_ascii_hexdigit() => {}
                                    Some(_) => {
                                        let end = i + self.s[i..].chars().next().map_or(1, char::len_utf8);
                                        return Err(syntax_error(
                                            self.s,
                                            end,
                                            "\"\\u\" must be followed by four hexadecimal digits.".into(),
                                        ));
                                    }
                                }
                            }
                            self.p += 6;
                            if self.decode {
                                let ch = u32::from_str_radix(&self.s[self.p - 4..self.p], 16).unwrap_or(0);
                                self.unicode_escape(ch, &mut hi)?;
                            }
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
                _ => {
                    if self.decode && hi.is_some() {
                        let len = self.s[self.p..].chars().next().map_or(1, char::len_utf8);
                        return Err(low_expected(self.s, self.p + len));
                    }
                    self.p += 1;
                    continue;
                }
            }
            run = self.p;
        }
    }

    /// One decoded `\uXXXX` (just read, `self.p` after it): surrogate pairs combined,
    /// `\u0000` refused (text cannot hold it), as PostgreSQL's lexer does.
    fn unicode_escape(&mut self, ch: u32, hi: &mut Option<u32>) -> Result<()> {
        let ch = match ch {
            0xD800..=0xDBFF => {
                if hi.is_some() {
                    return Err(syntax_error(self.s, self.p, "Unicode high surrogate must not follow a high surrogate.".into()));
                }
                *hi = Some(ch);
                return Ok(());
            }
            0xDC00..=0xDFFF => match hi.take() {
                Some(h) => 0x10000 + ((h - 0xD800) << 10) + (ch - 0xDC00),
                None => {
                    return Err(syntax_error(self.s, self.p, "Unicode low surrogate must follow a high surrogate.".into()));
                }
            },
            _ if hi.is_some() => {
                return Err(syntax_error(self.s, self.p, "Unicode low surrogate must follow a high surrogate.".into()));
            }
            ch => ch,
        };
        if ch == 0 {
            let mut e = syntax_error(self.s, self.p, "\\u0000 cannot be converted to text.".into());
            e.code = sqlstate::UNTRANSLATABLE_CHARACTER;
            e.message = "unsupported Unicode escape sequence".into();
            return Err(e);
        }
        self.strval.push(char::from_u32(ch).unwrap_or(char::REPLACEMENT_CHARACTER));
        Ok(())
    }

    /// A number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, read as PostgreSQL's
    /// json_lex_number does: letters, digits and `_` right after it belong to the token (and
    /// make it invalid); other characters end it.
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
        if b.get(p) == Some(&b'.') {
            p += 1;
            ok &= digits(&mut p);
        }
        if matches!(b.get(p), Some(b'e' | b'E')) {
            p += 1;
            if matches!(b.get(p), Some(b'+' | b'-')) {
                p += 1;
            }
            ok &= digits(&mut p);
        }
        while p < b.len() && alnum(b[p]) {
            ok = false;
            p += 1;
        }
        if !ok {
            return Err(syntax_error(self.s, p, format!("Token \"{}\" is invalid.", &self.s[start..p])));
        }
        self.p = p;
        Ok(())
    }
}

/// PostgreSQL's JSON_ALPHANUMERIC_CHAR: what an error report takes as part of a word.
fn alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

fn shown(l: &Lexer<'_>, t: Tok, at: usize) -> String {
    match t {
        Tok::End => String::new(),
        _ => l.s[at..l.p].to_string(),
    }
}

/// What a parse reports, in document order. Spans are byte ranges of `s`.
pub(super) trait Sink {
    /// `[` or `{` at `at`.
    fn begin(&mut self, object: bool, at: usize) -> Result<()>;
    /// The `]` or `}` ending at `end`.
    fn end(&mut self, end: usize) -> Result<()>;
    /// An object key (de-escaped when decoding), called as soon as it is read.
    fn key(&mut self, key: String) -> Result<()>;
    /// A scalar: its kind, span and (for a decoded string) value. Called after the token
    /// that follows it is read, as PostgreSQL's parser calls its scalar action (so a
    /// malformed next token is reported before, say, a number too large for numeric).
    fn scalar(&mut self, kind: Scalar, span: (usize, usize), strval: String) -> Result<()>;
}

/// The kinds of JSON scalar.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scalar {
    String,
    Number,
    True,
    False,
    Null,
}

struct NoSink;

impl Sink for NoSink {
    fn begin(&mut self, _: bool, _: usize) -> Result<()> {
        Ok(())
    }
    fn end(&mut self, _: usize) -> Result<()> {
        Ok(())
    }
    fn key(&mut self, _: String) -> Result<()> {
        Ok(())
    }
    fn scalar(&mut self, _: Scalar, _: (usize, usize), _: String) -> Result<()> {
        Ok(())
    }
}

/// Checks that `s` is one JSON value (PostgreSQL's `json_in`).
pub fn validate(s: &str) -> Result<()> {
    walk(s, false, &mut NoSink)
}

/// Parses `s` as one JSON value, reporting it to `sink`; `decode`: de-escape strings (with
/// the checks that brings).
pub(super) fn walk(s: &str, decode: bool, sink: &mut impl Sink) -> Result<()> {
    let mut l = Lexer { s, b: s.as_bytes(), p: 0, decode, strval: String::new() };
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
                    sink.begin(false, at)?;
                    (t, at) = l.next()?;
                    if t == Tok::ArrEnd {
                        stack.pop();
                        sink.end(l.p)?;
                        expect_value = false;
                        (t, at) = l.next()?;
                    }
                    continue;
                }
                Tok::ObjStart => {
                    stack.push(Ctx::Object);
                    sink.begin(true, at)?;
                    (t, at) = l.next()?;
                    if t == Tok::ObjEnd {
                        stack.pop();
                        sink.end(l.p)?;
                        expect_value = false;
                        (t, at) = l.next()?;
                        continue;
                    }
                    // A key, then a colon.
                    match t {
                        Tok::Str => sink.key(std::mem::take(&mut l.strval))?,
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
                    let kind = match t {
                        Tok::Str => Scalar::String,
                        Tok::Num => Scalar::Number,
                        Tok::True => Scalar::True,
                        Tok::False => Scalar::False,
                        _ => Scalar::Null,
                    };
                    let span = (at, l.p);
                    let strval = std::mem::take(&mut l.strval);
                    expect_value = false;
                    (t, at) = l.next()?;
                    sink.scalar(kind, span, strval)?;
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
                sink.end(l.p)?;
                (t, at) = l.next()?;
            }
            (Some(Ctx::Array), _) => {
                return Err(syntax_error(l.s, l.p, format!("Expected \",\" or \"]\", but found \"{}\".", shown(&l, t, at))))
            }
            (Some(Ctx::Object), Tok::Comma) => {
                (t, at) = l.next()?;
                match t {
                    Tok::Str => sink.key(std::mem::take(&mut l.strval))?,
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

/// A json value as written: each node's byte span in the text, strings de-escaped, object
/// members in written order (repeated keys kept). The json operators (`->`, `#>`, ...)
/// answer with spans of the original text, as PostgreSQL's json functions do.
#[derive(Debug)]
pub struct Node {
    pub span: (usize, usize),
    pub kind: NodeKind,
}

#[derive(Debug)]
pub enum NodeKind {
    /// A scalar and, for a string, its de-escaped value.
    Scalar(Scalar, String),
    Array(Vec<Node>),
    Object(Vec<(String, Node)>),
}

struct NodeBuilder {
    /// Open containers: start, items, pending key.
    stack: Vec<(usize, NodeKind, String)>,
    root: Option<Node>,
}

impl NodeBuilder {
    fn push(&mut self, n: Node) {
        match self.stack.last_mut() {
            None => self.root = Some(n),
            Some((_, NodeKind::Array(items), _)) => items.push(n),
            Some((_, NodeKind::Object(pairs), key)) => pairs.push((std::mem::take(key), n)),
            Some((_, NodeKind::Scalar(..), _)) => {}
        }
    }
}

impl Sink for NodeBuilder {
    fn begin(&mut self, object: bool, at: usize) -> Result<()> {
        if self.stack.len() >= super::jsonb::MAX_DEPTH {
            return Err(PgError::feature(format!(
                "json nesting deeper than {} levels is not supported by heapstore",
                super::jsonb::MAX_DEPTH
            )));
        }
        self.stack.push((at, if object { NodeKind::Object(Vec::new()) } else { NodeKind::Array(Vec::new()) }, String::new()));
        Ok(())
    }
    fn end(&mut self, end: usize) -> Result<()> {
        if let Some((start, kind, _)) = self.stack.pop() {
            self.push(Node { span: (start, end), kind });
        }
        Ok(())
    }
    fn key(&mut self, key: String) -> Result<()> {
        if let Some((_, _, k)) = self.stack.last_mut() {
            *k = key;
        }
        Ok(())
    }
    fn scalar(&mut self, kind: Scalar, span: (usize, usize), strval: String) -> Result<()> {
        self.push(Node { span, kind: NodeKind::Scalar(kind, strval) });
        Ok(())
    }
}

/// Parses json text into [`Node`]s; `decode`: strings de-escaped, with the errors that brings
/// (PostgreSQL's field and element extraction decodes; `json_typeof` and `json_array_length`
/// only check the syntax).
pub fn parse_nodes(s: &str, decode: bool) -> Result<Node> {
    let mut b = NodeBuilder { stack: Vec::new(), root: None };
    walk(s, decode, &mut b)?;
    Ok(b.root.unwrap_or(Node { span: (0, 0), kind: NodeKind::Scalar(Scalar::Null, String::new()) }))
}

impl Node {
    /// An object member's value (the last of a repeated key, as PostgreSQL's `->` finds it).
    pub fn field(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            NodeKind::Object(pairs) => pairs.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// An array element (negative counts from the end).
    pub fn element(&self, i: i64) -> Option<&Node> {
        match &self.kind {
            NodeKind::Array(items) => {
                let n = items.len() as i64;
                let i = if i < 0 { i + n } else { i };
                if i < 0 || i >= n {
                    None
                } else {
                    items.get(i as usize)
                }
            }
            _ => None,
        }
    }

    /// `json_typeof`.
    pub fn type_name(&self) -> &'static str {
        match &self.kind {
            NodeKind::Scalar(Scalar::String, _) => "string",
            NodeKind::Scalar(Scalar::Number, _) => "number",
            NodeKind::Scalar(Scalar::True | Scalar::False, _) => "boolean",
            NodeKind::Scalar(Scalar::Null, _) => "null",
            NodeKind::Array(_) => "array",
            NodeKind::Object(_) => "object",
        }
    }

    /// The node's text as written.
    pub fn text<'a>(&self, doc: &'a str) -> &'a str {
        &doc[self.span.0..self.span.1]
    }

    /// `->>`: a string's value, JSON null as NULL, anything else as written.
    pub fn as_text(&self, doc: &str) -> Option<String> {
        match &self.kind {
            NodeKind::Scalar(Scalar::Null, _) => None,
            NodeKind::Scalar(Scalar::String, v) => Some(v.clone()),
            _ => Some(self.text(doc).to_string()),
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
        Value::Int2(_) | Value::Int4(_) | Value::Int8(_) => out.push_str(&text(v)),
        Value::Float4(_) | Value::Float8(_) | Value::Numeric(_) => {
            let t = text(v);
            if matches!(t.as_str(), "NaN" | "Infinity" | "-Infinity") {
                quote(&t, out);
            } else {
                out.push_str(&t);
            }
        }
        Value::Json(j) | Value::Jsonb(j) => out.push_str(j),
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
                let s = match v {
                    Value::Timestamptz(t) => {
                        let mut b = Vec::new();
                        super::datetime::format_timestamptz_as(*t, true, &mut b);
                        String::from_utf8_lossy(&b).into_owned()
                    }
                    _ => text(v),
                };
                let s = s.replacen(' ', "T", 1);
                quote(&s, out);
            }
        },
        Value::Array(a) => array_to_json(a, false, out),
        Value::Record(r) => record_to_json(r, false, out),
        Value::Text(s) => quote(s, out),
        other => quote(&text(other), out),
    }
}

/// A record as a JSON object (composite_to_json): each field by its name, separated by `,`
/// (`,\n ` when pretty; nested values never pretty).
pub fn record_to_json(r: &super::Record, pretty: bool, out: &mut String) {
    let fields = match r.ty.id {
        TypeId::Record(k) => k.fields(),
        _ => std::borrow::Cow::Owned(Vec::new()),
    };
    out.push('{');
    for (i, ((name, ty), v)) in fields.iter().zip(&r.fields).enumerate() {
        if i > 0 {
            out.push_str(if pretty { ",\n " } else { "," });
        }
        quote(name, out);
        out.push(':');
        to_json(v, ty, out);
    }
    out.push('}');
}

/// A (possibly multidimensional) array as nested JSON arrays, elements separated by `,`
/// (`,\n ` between the outermost dimension's elements when pretty, as array_dim_to_json).
pub fn array_to_json(a: &super::Array, pretty: bool, out: &mut String) {
    if a.items.is_empty() {
        out.push_str("[]");
        return;
    }
    let elem = a.elem();
    let dims: Vec<usize> = a.dims.iter().map(|d| d.len as usize).collect();
    fn level(items: &[Value], dims: &[usize], elem: &SqlType, pretty: bool, out: &mut String) {
        out.push('[');
        let step = dims[1..].iter().product::<usize>();
        for i in 0..dims[0] {
            if i > 0 {
                out.push_str(if pretty { ",\n " } else { "," });
            }
            if dims.len() == 1 {
                to_json(&items[i], elem, out);
            } else {
                level(&items[i * step..(i + 1) * step], &dims[1..], elem, false, out);
            }
        }
        out.push(']');
    }
    level(&a.items, &dims, &elem, pretty, out);
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
        let key = key_text(&pair[0].0, &pair[0].1)?;
        quote(&key, &mut out);
        out.push_str(" : ");
        to_json(&pair[1].0, &pair[1].1, &mut out);
    }
    out.push('}');
    Ok(Value::Json(out))
}

/// An object key made from a SQL value, as `datum_to_json` makes keys: the JSON form's text
/// (booleans `true` / `false`, timestamps in ISO 8601 with a `T`, numbers as printed); arrays,
/// records, json and jsonb are refused (22023).
pub fn key_text(v: &Value, ty: &SqlType) -> Result<String> {
    if matches!(v, Value::Array(_) | Value::Record(_) | Value::Json(_) | Value::Jsonb(_)) {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, "key value must be scalar, not array, composite, or json"));
    }
    let mut j = String::new();
    to_json(v, ty, &mut j);
    Ok(match super::jsonb::parse(&j)? {
        super::jsonb::Jsonb::String(s) => s,
        other => other.to_text(),
    })
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
        (e.detail.clone().map(|d| d.to_string()).unwrap_or_default(), e.context.clone().map(|c| c.to_string()).unwrap_or_default())
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

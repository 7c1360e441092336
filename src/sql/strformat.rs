//! `format(formatstr text [, args "any" ...])`: PostgreSQL's `text_format`.
//!
//! A conversion is `%[position$][-][width]type` with type `s` (the value's text, NULL as an
//! empty string), `I` (quoted as an identifier; NULL is 22004) or `L` (quoted as a literal;
//! NULL as `NULL`); `%%` is a `%`. `position` is 1-based over the arguments after the format
//! string; without one a conversion takes the argument after the previous conversion's. A
//! width pads with blanks to that many characters, on the left unless `-` is given; `*` takes
//! the width from the next argument (`*n$` from argument n), a negative one meaning `-`.
//!
//! Invariants: arguments are never read past the last (22023 `too few arguments for
//! format()`); unused arguments are ignored, as in PostgreSQL; every malformed specifier is
//! PostgreSQL's 22023 with its hint, never copied through.

use crate::error::{PgError, Result};
use crate::types::{SqlType, TypeId, Value};

fn unterminated() -> PgError {
    PgError::new("22023", "unterminated format() type specifier").with_hint("For a single \"%\" use \"%%\".")
}

/// The digits at `cp` as an int4 (22003 `number is out of range` past it); None without any.
fn digits(s: &[char], cp: &mut usize) -> Result<Option<i32>> {
    let mut val: i32 = 0;
    let mut found = false;
    while let Some(d) = s.get(*cp).and_then(|c| c.to_digit(10)) {
        val = val.checked_mul(10).and_then(|v| v.checked_add(d as i32)).ok_or_else(|| PgError::new("22003", "number is out of range"))?;
        advance(s, cp)?;
        found = true;
    }
    Ok(found.then_some(val))
}

/// Moves past one character; the specifier may not end there.
fn advance(s: &[char], cp: &mut usize) -> Result<()> {
    *cp += 1;
    if *cp >= s.len() {
        return Err(unterminated());
    }
    Ok(())
}

fn arg_zero() -> PgError {
    PgError::new("22023", "format specifies argument 0, but arguments are numbered from 1")
}

/// The text form of an argument, by its own type's output function.
fn text_of(v: &Value) -> Result<String> {
    match v {
        Value::Text(s) => Ok(s.clone()),
        v => Ok(v.to_text(&v.natural_type().unwrap_or(SqlType::new(TypeId::Text))).unwrap_or_default()),
    }
}

/// `format(fmt, args...)`; `args[0]` is the format string (the call is NULL when it is).
pub fn format(args: &[Value]) -> Result<Value> {
    let fmt = match &args[0] {
        Value::Null => return Ok(Value::Null),
        v => text_of(v)?,
    };
    let s: Vec<char> = fmt.chars().collect();
    let nargs = args.len();
    let mut out = String::with_capacity(fmt.len());
    let mut arg = 0usize;
    let mut cp = 0usize;
    let too_few = || PgError::new("22023", "too few arguments for format()");
    while cp < s.len() {
        if s[cp] != '%' {
            out.push(s[cp]);
            cp += 1;
            continue;
        }
        advance(&s, &mut cp)?;
        if s[cp] == '%' {
            out.push('%');
            cp += 1;
            continue;
        }
        // [position$][-][width | * | *n$]
        let (mut argpos, mut widthpos, mut minus, mut width) = (None, None, false, 0i32);
        let mut simple_width = false;
        if let Some(n) = digits(&s, &mut cp)? {
            if s[cp] != '$' {
                width = n;
                simple_width = true;
            } else {
                if n == 0 {
                    return Err(arg_zero());
                }
                argpos = Some(n as usize);
                advance(&s, &mut cp)?;
            }
        }
        if !simple_width {
            while s[cp] == '-' {
                minus = true;
                advance(&s, &mut cp)?;
            }
            if s[cp] == '*' {
                advance(&s, &mut cp)?;
                match digits(&s, &mut cp)? {
                    Some(n) => {
                        if s[cp] != '$' {
                            return Err(PgError::new("22023", "width argument position must be ended by \"$\""));
                        }
                        if n == 0 {
                            return Err(arg_zero());
                        }
                        widthpos = Some(n as usize);
                        advance(&s, &mut cp)?;
                    }
                    None => widthpos = Some(0),
                }
            } else if let Some(n) = digits(&s, &mut cp)? {
                width = n;
            }
        }
        let conv = s[cp];
        if !matches!(conv, 's' | 'I' | 'L') {
            return Err(PgError::new("22023", format!("unrecognized format() type specifier \"{conv}\""))
                .with_hint("For a single \"%\" use \"%%\"."));
        }
        if let Some(wp) = widthpos {
            arg = if wp > 0 { wp } else { arg + 1 };
            let v = args.get(arg).filter(|_| arg < nargs).ok_or_else(too_few)?;
            width = match v {
                Value::Null => 0,
                Value::Int2(x) => i32::from(*x),
                Value::Int4(x) => *x,
                v => {
                    let t = text_of(v)?;
                    crate::types::int::parse_int4(&t)?
                }
            };
            if width < 0 {
                minus = true;
                width = width.checked_neg().ok_or_else(|| PgError::new("22003", "number is out of range"))?;
            }
        }
        arg = match argpos {
            Some(p) => p,
            None => arg + 1,
        };
        let v = args.get(arg).filter(|_| arg < nargs).ok_or_else(too_few)?;
        let text = match (v, conv) {
            (Value::Null, 's') => String::new(),
            (Value::Null, 'L') => "NULL".to_string(),
            (Value::Null, _) => return Err(PgError::new("22004", "null values cannot be formatted as an SQL identifier")),
            (v, 'I') => super::func::quote_ident(&text_of(v)?),
            (v, 'L') => super::func::quote_literal(&text_of(v)?),
            (v, _) => text_of(v)?,
        };
        let len = text.chars().count();
        let pad = (width as usize).saturating_sub(len);
        // A text value holds at most 1GB (enlargeStringInfo's limit), checked as PostgreSQL
        // appends: the padding before the value, or the value and then the padding.
        let too_big = |have: usize, more: usize| {
            (have + more >= 1 << 30).then(|| {
                PgError::new("54000", "out of memory")
                    .with_detail(format!("Cannot enlarge string buffer containing {have} bytes by {more} more bytes."))
            })
        };
        let first = if minus { text.len() } else { pad };
        if let Some(e) = too_big(out.len(), first).or_else(|| too_big(out.len() + first, text.len() + pad - first)) {
            return Err(e);
        }
        if minus {
            out.push_str(&text);
            out.extend(std::iter::repeat_n(' ', pad));
        } else {
            out.extend(std::iter::repeat_n(' ', pad));
            out.push_str(&text);
        }
        cp += 1;
    }
    Ok(Value::Text(out))
}

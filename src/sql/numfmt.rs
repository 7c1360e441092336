//! PostgreSQL 15 numeric template formatting: `to_char(number, text)` and
//! `to_number(text, text)`, the "NUM" half of PostgreSQL's `formatting.c`.
//!
//! The template is parsed exactly as PostgreSQL parses it (keywords `9 0 . ,
//! B C D EEEE FM G L MI PL PR RN SG SP S TH V` and their lower-case forms,
//! double-quoted literals with backslash escapes, any other character copied
//! literally), with the same syntax errors (SQLSTATE 42601) raised in the same
//! order.  The value is then turned into PostgreSQL's intermediate "number
//! string" by type-specific rules and run through a faithful port of
//! `NUM_processor`, including its quirks (output cut at an embedded NUL byte,
//! `C`/`SP`/`B` printing nothing, literal text dropped under `EEEE`, ...).
//!
//! Invariants:
//! * Output is byte-for-byte what PostgreSQL 15 (C locale: `.` decimal point,
//!   `,` group separator, `-`/`+` signs, a space as currency symbol) returns,
//!   or the same error (SQLSTATE, message, detail).  Anything this module
//!   cannot reproduce with certainty is refused with SQLSTATE 0A000 and a
//!   message ending in "is not supported by heapstore"; it never guesses.
//! * `numeric` values are handled as exact decimal text: rounding is half away
//!   from zero on the digits, never through binary floating point, so values of
//!   any length work.
//! * `real`/`double precision` values are printed like C's `printf` as used by
//!   PostgreSQL (exact binary value, ties to even, `NaN`/`Infinity` spelled
//!   PostgreSQL's way, at most 350 computed fraction digits then zeros).
//! * `integer` (and `smallint`, which PostgreSQL formats as an integer) and
//!   `bigint` go through different code in PostgreSQL, which can give
//!   different text for the same value (ties under `EEEE`, `V` overflow):
//!   [`NumValue::Int4`] and [`NumValue::Int8`] follow each one's rules.
//! * No panics on any input, no `unsafe`, only `std`.

use std::cmp::Ordering;

/// An error as PostgreSQL reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FmtError {
    pub code: &'static str,
    pub message: String,
    pub detail: Option<String>,
    pub hint: Option<String>,
}

impl FmtError {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        FmtError { code, message: message.into(), detail: None, hint: None }
    }

    fn syntax(message: &str) -> Self {
        FmtError::new("42601", message)
    }

    fn unsupported(what: &str) -> Self {
        FmtError::new("0A000", format!("{what} is not supported by heapstore"))
    }

    fn bigint_range() -> Self {
        FmtError::new("22003", "bigint out of range")
    }

    fn int_range() -> Self {
        FmtError::new("22003", "integer out of range")
    }
}

/// The value to format. `Numeric` carries the value's exact decimal text as PostgreSQL's numeric_out prints it ("-123.4500", "0", "NaN", "Infinity", "-Infinity"); its scale is the number of digits after the point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NumValue<'a> {
    /// integer or smallint.
    Int4(i32),
    /// bigint.
    Int8(i64),
    Float4(f32),
    Float8(f64),
    Numeric(&'a str),
}

/// to_char(value, fmt).
pub fn to_char(v: NumValue<'_>, fmt: &str) -> Result<String, FmtError> {
    // PostgreSQL returns an empty string for an empty template, unparsed.
    if fmt.is_empty() {
        return Ok(String::new());
    }
    if fmt.contains('\0') {
        return Err(FmtError::unsupported("a NUL character in a to_char template"));
    }
    let (nodes, desc) = parse_format(fmt)?;
    let prep = match v {
        NumValue::Int4(i) => prepare_int4(i, &desc),
        NumValue::Int8(i) => prepare_int8(i, &desc)?,
        NumValue::Float4(f) => prepare_float(FloatVal::F4(f), &desc)?,
        NumValue::Float8(f) => prepare_float(FloatVal::F8(f), &desc)?,
        NumValue::Numeric(s) => prepare_numeric(s, &desc)?,
    };
    run_to_char(&nodes, prep)
}

/// to_number(input, fmt): the numeric's decimal text, in the form numeric_in would accept and with the scale PostgreSQL's to_number gives (e.g. to_number('12,454.8-', '99G999D9S') is "-12454.8").
pub fn to_number(input: &str, fmt: &str) -> Result<String, FmtError> {
    if fmt.is_empty() {
        // PostgreSQL returns SQL NULL here, which a String cannot carry.
        return Err(FmtError::unsupported("to_number with an empty template (PostgreSQL returns NULL)"));
    }
    if fmt.contains('\0') || input.contains('\0') {
        return Err(FmtError::unsupported("a NUL character in to_number input"));
    }
    let (nodes, desc) = parse_format(fmt)?;
    if desc.eeee {
        return Err(FmtError::new("0A000", "\"EEEE\" not supported for input"));
    }
    if desc.roman {
        return Err(FmtError::new("0A000", "\"RN\" not supported for input"));
    }
    if desc.pre + desc.multi + desc.post > 1000 {
        return Err(FmtError::unsupported("to_number with more than 1000 digit positions"));
    }
    let (number, read_post) = run_from_char(&nodes, &desc, input.as_bytes());
    numeric_in_for_to_number(&number, &desc, read_post)
}

// ---------------------------------------------------------------------------
// Template parsing (parse_format + NUMDesc_prepare)
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Comma,
    Dec,
    Zero,
    Nine,
    B,
    C,
    D,
    E,
    Fm,
    G,
    L,
    Mi,
    Pl,
    Pr,
    RnUpper,
    Sg,
    Sp,
    S,
    ThUpper,
    V,
    RnLower,
    ThLower,
}

/// PostgreSQL's NUM_keywords, in its search order (first prefix match wins).
const KEYWORDS: &[(&str, Key)] = &[
    (",", Key::Comma),
    (".", Key::Dec),
    ("0", Key::Zero),
    ("9", Key::Nine),
    ("B", Key::B),
    ("C", Key::C),
    ("D", Key::D),
    ("EEEE", Key::E),
    ("FM", Key::Fm),
    ("G", Key::G),
    ("L", Key::L),
    ("MI", Key::Mi),
    ("PL", Key::Pl),
    ("PR", Key::Pr),
    ("RN", Key::RnUpper),
    ("SG", Key::Sg),
    ("SP", Key::Sp),
    ("S", Key::S),
    ("TH", Key::ThUpper),
    ("V", Key::V),
    ("b", Key::B),
    ("c", Key::C),
    ("d", Key::D),
    ("eeee", Key::E),
    ("fm", Key::Fm),
    ("g", Key::G),
    ("l", Key::L),
    ("mi", Key::Mi),
    ("pl", Key::Pl),
    ("pr", Key::Pr),
    ("rn", Key::RnLower),
    ("sg", Key::Sg),
    ("sp", Key::Sp),
    ("s", Key::S),
    ("th", Key::ThLower),
    ("v", Key::V),
];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node<'f> {
    Key(Key),
    /// One (possibly multi-byte) literal character.
    Lit(&'f str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum LSign {
    #[default]
    None,
    Pre,
    Post,
}

/// PostgreSQL's NUMDesc.
#[derive(Debug, Clone, Default)]
struct Desc {
    pre: i64,
    post: i64,
    lsign: LSign,
    pre_lsign_num: i64,
    multi: i64,
    zero_start: i64,
    zero_end: i64,
    decimal: bool,
    zero: bool,
    blank: bool,
    fillmode: bool,
    lsign_on: bool,
    bracket: bool,
    minus: bool,
    plus: bool,
    roman: bool,
    multi_on: bool,
    eeee: bool,
}

fn parse_format(fmt: &str) -> Result<(Vec<Node<'_>>, Desc), FmtError> {
    let b = fmt.as_bytes();
    let mut nodes = Vec::new();
    let mut d = Desc::default();
    let mut i = 0;
    while i < b.len() {
        if let Some(&(name, key)) = KEYWORDS.iter().find(|(name, _)| b[i..].starts_with(name.as_bytes())) {
            prepare(&mut d, key)?;
            nodes.push(Node::Key(key));
            i += name.len();
            continue;
        }
        if b[i] == b'"' {
            i += 1;
            while i < b.len() {
                if b[i] == b'"' {
                    i += 1;
                    break;
                }
                // backslash quotes the next character, if any
                if b[i] == b'\\' && i + 1 < b.len() {
                    i += 1;
                }
                i = push_lit(&mut nodes, fmt, i);
            }
            continue;
        }
        // Outside quotes, backslash is only special before a double quote.
        if b[i] == b'\\' && i + 1 < b.len() && b[i + 1] == b'"' {
            i += 1;
        }
        i = push_lit(&mut nodes, fmt, i);
    }
    Ok((nodes, d))
}

/// Push the character starting at byte `i` as a literal node and return the
/// index after it.  `i` is always a char boundary (the parser only steps over
/// ASCII bytes or whole characters); a non-boundary is skipped, not a panic.
fn push_lit<'f>(nodes: &mut Vec<Node<'f>>, fmt: &'f str, i: usize) -> usize {
    match fmt.get(i..).and_then(|t| t.chars().next()) {
        Some(c) => {
            let end = i + c.len_utf8();
            nodes.push(Node::Lit(&fmt[i..end]));
            end
        }
        None => i + 1,
    }
}

fn prepare(d: &mut Desc, key: Key) -> Result<(), FmtError> {
    if d.eeee && key != Key::E {
        return Err(FmtError::syntax("\"EEEE\" must be the last pattern used"));
    }
    match key {
        Key::Nine => {
            if d.bracket {
                return Err(FmtError::syntax("\"9\" must be ahead of \"PR\""));
            }
            if d.multi_on {
                d.multi += 1;
            } else if d.decimal {
                d.post += 1;
            } else {
                d.pre += 1;
            }
        }
        Key::Zero => {
            if d.bracket {
                return Err(FmtError::syntax("\"0\" must be ahead of \"PR\""));
            }
            if !d.zero && !d.decimal {
                d.zero = true;
                d.zero_start = d.pre + 1;
            }
            if d.decimal {
                d.post += 1;
            } else {
                d.pre += 1;
            }
            d.zero_end = d.pre + d.post;
        }
        Key::B => {
            if d.pre == 0 && d.post == 0 && !d.zero {
                d.blank = true;
            }
        }
        Key::D | Key::Dec => {
            if d.decimal {
                return Err(FmtError::syntax("multiple decimal points"));
            }
            if d.multi_on {
                return Err(FmtError::syntax("cannot use \"V\" and decimal point together"));
            }
            d.decimal = true;
        }
        Key::Fm => d.fillmode = true,
        Key::S => {
            if d.lsign_on {
                return Err(FmtError::syntax("cannot use \"S\" twice"));
            }
            if d.plus || d.minus || d.bracket {
                return Err(FmtError::syntax("cannot use \"S\" and \"PL\"/\"MI\"/\"SG\"/\"PR\" together"));
            }
            if !d.decimal {
                d.lsign = LSign::Pre;
                d.pre_lsign_num = d.pre;
                d.lsign_on = true;
            } else if d.lsign == LSign::None {
                d.lsign = LSign::Post;
                d.lsign_on = true;
            }
        }
        Key::Mi => {
            if d.lsign_on {
                return Err(FmtError::syntax("cannot use \"S\" and \"MI\" together"));
            }
            d.minus = true;
        }
        Key::Pl => {
            if d.lsign_on {
                return Err(FmtError::syntax("cannot use \"S\" and \"PL\" together"));
            }
            d.plus = true;
        }
        Key::Sg => {
            if d.lsign_on {
                return Err(FmtError::syntax("cannot use \"S\" and \"SG\" together"));
            }
            d.minus = true;
            d.plus = true;
        }
        Key::Pr => {
            if d.lsign_on || d.plus || d.minus {
                return Err(FmtError::syntax("cannot use \"PR\" and \"S\"/\"PL\"/\"MI\"/\"SG\" together"));
            }
            d.bracket = true;
        }
        Key::RnUpper | Key::RnLower => d.roman = true,
        Key::V => {
            if d.decimal {
                return Err(FmtError::syntax("cannot use \"V\" and decimal point together"));
            }
            d.multi_on = true;
        }
        Key::E => {
            if d.eeee {
                return Err(FmtError::syntax("cannot use \"EEEE\" twice"));
            }
            if d.blank || d.fillmode || d.lsign_on || d.bracket || d.minus || d.plus || d.roman || d.multi_on {
                let mut e = FmtError::syntax("\"EEEE\" is incompatible with other formats");
                e.detail = Some("\"EEEE\" may only be used together with digit and decimal point patterns.".to_string());
                return Err(e);
            }
            d.eeee = true;
        }
        Key::C | Key::G | Key::L | Key::Sp | Key::ThUpper | Key::ThLower | Key::Comma => {}
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Exact decimal arithmetic on digit strings (for numeric and integers)
// ---------------------------------------------------------------------------

/// A finite decimal: sign, integer digits without leading zeros (empty for
/// zero), fraction digits (ASCII).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Decimal {
    neg: bool,
    int: Vec<u8>,
    frac: Vec<u8>,
}

impl Decimal {
    fn from_u128(neg: bool, v: u128) -> Decimal {
        let mut d = Decimal { neg, int: v.to_string().into_bytes(), frac: Vec::new() };
        d.normalize();
        d
    }

    fn is_zero(&self) -> bool {
        self.int.iter().chain(self.frac.iter()).all(|&c| c == b'0')
    }

    fn normalize(&mut self) {
        let lead = self.int.iter().take_while(|&&c| c == b'0').count();
        self.int.drain(..lead);
        if self.is_zero() {
            self.neg = false;
        }
    }

    /// Multiply by 10^n (exact).
    fn shift_left(&mut self, n: usize) {
        let take = n.min(self.frac.len());
        let moved: Vec<u8> = self.frac.drain(..take).collect();
        self.int.extend_from_slice(&moved);
        self.int.extend(std::iter::repeat_n(b'0', n - take));
        self.normalize();
    }

    /// Divide by 10^n (exact).
    fn shift_right(&mut self, n: usize) {
        let take = n.min(self.int.len());
        let split = self.int.len() - take;
        let mut frac: Vec<u8> = std::iter::repeat_n(b'0', n - take).collect();
        frac.extend_from_slice(&self.int[split..]);
        frac.extend_from_slice(&self.frac);
        self.int.truncate(split);
        self.frac = frac;
        self.normalize();
    }

    /// Round half away from zero to exactly `scale` fraction digits.
    fn round(&mut self, scale: usize) {
        match self.frac.len().cmp(&scale) {
            Ordering::Less => self.frac.resize(scale, b'0'),
            Ordering::Equal => {}
            Ordering::Greater => {
                let up = self.frac[scale] >= b'5';
                self.frac.truncate(scale);
                if up {
                    let mut carry = true;
                    for c in self.frac.iter_mut().rev().chain(self.int.iter_mut().rev()) {
                        if *c == b'9' {
                            *c = b'0';
                        } else {
                            *c += 1;
                            carry = false;
                            break;
                        }
                    }
                    if carry {
                        self.int.insert(0, b'1');
                    }
                }
            }
        }
        self.normalize();
    }

    /// numeric_out's text.
    fn to_text(&self) -> String {
        let mut s = String::new();
        if self.neg && !self.is_zero() {
            s.push('-');
        }
        if self.int.is_empty() {
            s.push('0');
        } else {
            s.push_str(&String::from_utf8_lossy(&self.int));
        }
        if !self.frac.is_empty() {
            s.push('.');
            s.push_str(&String::from_utf8_lossy(&self.frac));
        }
        s
    }

    /// numeric_out_sci(value, rscale): exponent fixed before rounding, the
    /// significand rounded half away from zero (so it may become "10.00").
    fn to_sci(&self, rscale: usize) -> String {
        let all: Vec<u8> = self.int.iter().chain(self.frac.iter()).copied().collect();
        let (exp, mut sig) = match all.iter().position(|&c| c != b'0') {
            None => (0i64, Decimal { neg: false, int: Vec::new(), frac: Vec::new() }),
            Some(f) => (self.int.len() as i64 - 1 - f as i64, Decimal { neg: self.neg, int: vec![all[f]], frac: all[f + 1..].to_vec() }),
        };
        sig.round(rscale);
        format!("{}e{}", sig.to_text(), exp_text(exp))
    }
}

/// C's "%+03d" for an exponent.
fn exp_text(exp: i64) -> String {
    format!("{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs())
}

enum NumText {
    NaN,
    Inf(bool),
    Finite(Decimal),
}

fn parse_numeric_text(s: &str) -> Result<NumText, FmtError> {
    match s {
        "NaN" => return Ok(NumText::NaN),
        "Infinity" => return Ok(NumText::Inf(false)),
        "-Infinity" => return Ok(NumText::Inf(true)),
        _ => {}
    }
    let bad = || FmtError::new("22P02", format!("invalid input syntax for type numeric: \"{s}\""));
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (ip, fp) = match body.split_once('.') {
        Some((a, b)) => (a, b),
        None => (body, ""),
    };
    let digits_ok = |t: &str| t.bytes().all(|c| c.is_ascii_digit());
    if !digits_ok(ip) || !digits_ok(fp) || (ip.is_empty() && fp.is_empty()) {
        return Err(bad());
    }
    let mut d = Decimal { neg, int: ip.as_bytes().to_vec(), frac: fp.as_bytes().to_vec() };
    d.normalize();
    Ok(NumText::Finite(d))
}

// ---------------------------------------------------------------------------
// C printf emulation for doubles, as PostgreSQL's snprintf.c drives it
// ---------------------------------------------------------------------------

/// Fraction digits computed before PostgreSQL's snprintf pads with zeros.
const PG_PRINTF_MAX_PREC: usize = 350;

/// "%.*f" (`plus` false) or "%+.*f"-style sign handling shared by both forms.
fn c_sign(x: f64, plus: bool) -> &'static str {
    if x.is_sign_negative() {
        "-"
    } else if plus {
        "+"
    } else {
        ""
    }
}

/// PostgreSQL's psprintf("%.*f", prec, x).
fn c_fixed(x: f64, prec: usize) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    let sign = c_sign(x, false);
    if x.is_infinite() {
        return format!("{sign}Infinity");
    }
    let p = prec.min(PG_PRINTF_MAX_PREC);
    let mut s = format!("{sign}{:.*}", p, x.abs());
    s.extend(std::iter::repeat_n('0', prec - p));
    s
}

/// PostgreSQL's psprintf("%+.*e", prec, x).
fn c_sci_plus(x: f64, prec: usize) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    let sign = c_sign(x, true);
    if x.is_infinite() {
        return format!("{sign}Infinity");
    }
    let p = prec.min(PG_PRINTF_MAX_PREC);
    let r = format!("{:.*e}", p, x.abs());
    let (mant, exp) = r.split_once('e').unwrap_or((r.as_str(), "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let zeros: String = std::iter::repeat_n('0', prec - p).collect();
    format!("{sign}{mant}{zeros}e{}", exp_text(exp))
}

// ---------------------------------------------------------------------------
// Type-specific preparation of the number string (xxx_to_char in formatting.c)
// ---------------------------------------------------------------------------

/// What NUM_processor gets: the number string, its padding and sign, and the
/// (possibly adjusted) template description.
struct Prep {
    number: Vec<u8>,
    out_pre_spaces: i64,
    sign: u8,
    desc: Desc,
}

fn roman_prep(desc: &Desc, value: i32) -> Prep {
    Prep { number: int_to_roman(value).into_bytes(), out_pre_spaces: 0, sign: 0, desc: desc.clone() }
}

fn int_to_roman(n: i32) -> String {
    if !(1..=3999).contains(&n) {
        return "#".repeat(15);
    }
    const ONES: [&str; 9] = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"];
    const TENS: [&str; 9] = ["X", "XX", "XXX", "XL", "L", "LX", "LXX", "LXXX", "XC"];
    const HUNDREDS: [&str; 9] = ["C", "CC", "CCC", "CD", "D", "DC", "DCC", "DCCC", "CM"];
    let n = n as usize;
    let mut s = "M".repeat(n / 1000);
    for (digit, table) in [((n / 100) % 10, &HUNDREDS), ((n / 10) % 10, &TENS), (n % 10, &ONES)] {
        if digit > 0 {
            s.push_str(table[digit - 1]);
        }
    }
    s
}

/// The "#" string PostgreSQL shows for NaN/Infinity under EEEE.
fn eeee_hashes(desc: &Desc) -> Vec<u8> {
    let len = (desc.pre + desc.post + 6).max(1) as usize;
    let mut v = vec![b'#'; len];
    v[0] = b' ';
    if let Some(c) = v.get_mut((desc.pre + 1) as usize) {
        *c = b'.';
    }
    v
}

/// Common tail: split off the sign, pad with leading spaces or overflow to '#'.
fn digits_prep(orgnum: &str, desc: Desc, int_pad_post: bool) -> Prep {
    let (sign, body) = match orgnum.strip_prefix('-') {
        Some(rest) => (b'-', rest),
        None => (b'+', orgnum),
    };
    let mut number = body.as_bytes().to_vec();
    let pre_len = if int_pad_post {
        let l = number.len() as i64;
        if desc.post > 0 {
            number.push(b'.');
            number.extend(std::iter::repeat_n(b'0', desc.post as usize));
        }
        l
    } else {
        number.iter().position(|&c| c == b'.').unwrap_or(number.len()) as i64
    };
    let mut out_pre_spaces = 0;
    if pre_len < desc.pre {
        out_pre_spaces = desc.pre - pre_len;
    } else if pre_len > desc.pre {
        number = vec![b'#'; (desc.pre + desc.post + 1) as usize];
        number[desc.pre as usize] = b'.';
    }
    Prep { number, out_pre_spaces, sign, desc }
}

fn prepare_numeric(text: &str, desc: &Desc) -> Result<Prep, FmtError> {
    let val = parse_numeric_text(text)?;
    if desc.roman {
        let mut d = match val {
            NumText::NaN => return Err(FmtError::new("0A000", "cannot convert NaN to integer")),
            NumText::Inf(_) => return Err(FmtError::new("0A000", "cannot convert infinity to integer")),
            NumText::Finite(d) => d,
        };
        d.round(0);
        let v = if d.int.len() > 10 {
            None
        } else {
            let mag: i64 =
                std::str::from_utf8(&d.int).ok().and_then(|s| if s.is_empty() { Some(0) } else { s.parse().ok() }).unwrap_or(i64::MAX);
            i32::try_from(if d.neg { -mag } else { mag }).ok()
        };
        return match v {
            Some(v) => Ok(roman_prep(desc, v)),
            None => Err(FmtError::int_range()),
        };
    }
    if desc.eeee {
        if desc.post > 1000 {
            return Err(FmtError::unsupported("\"EEEE\" with more than 1000 digits"));
        }
        let number = match val {
            NumText::NaN | NumText::Inf(_) => eeee_hashes(desc),
            NumText::Finite(d) => {
                let s = d.to_sci(desc.post as usize);
                if s.starts_with('-') {
                    s.into_bytes()
                } else {
                    format!(" {s}").into_bytes()
                }
            }
        };
        return Ok(Prep { number, out_pre_spaces: 0, sign: 0, desc: desc.clone() });
    }
    if desc.post > 1000 {
        return Err(FmtError::unsupported("to_char of numeric with more than 1000 fraction digits"));
    }
    let mut desc = desc.clone();
    if desc.multi_on {
        desc.pre += desc.multi;
    }
    let orgnum = match val {
        NumText::NaN => "NaN".to_string(),
        NumText::Inf(neg) => if neg { "-Infinity" } else { "Infinity" }.to_string(),
        NumText::Finite(mut d) => {
            if desc.multi_on {
                d.shift_left(desc.multi as usize);
            }
            d.round(desc.post as usize);
            d.to_text()
        }
    };
    Ok(digits_prep(&orgnum, desc, false))
}

#[derive(Clone, Copy)]
enum FloatVal {
    F4(f32),
    F8(f64),
}

/// Exact 10^n as a double, for n where that is representable.
fn pow10_f64(n: i64) -> Option<f64> {
    if (0..=22).contains(&n) {
        format!("1e{n}").parse().ok()
    } else {
        None
    }
}

fn prepare_float(v: FloatVal, desc: &Desc) -> Result<Prep, FmtError> {
    let wide = match v {
        FloatVal::F4(f) => f64::from(f),
        FloatVal::F8(f) => f,
    };
    if desc.roman {
        // rint(), then the int32 range check; anything else prints '#'.
        let r = wide.round_ties_even();
        let r = match v {
            FloatVal::F4(_) => f64::from(r as f32),
            FloatVal::F8(_) => r,
        };
        let iv = if !r.is_nan() && (-2147483648.0..2147483648.0).contains(&r) { r as i32 } else { i32::MAX };
        return Ok(roman_prep(desc, iv));
    }
    if desc.eeee {
        let number = if wide.is_nan() || wide.is_infinite() {
            eeee_hashes(desc)
        } else {
            let mut s = c_sci_plus(wide, desc.post as usize).into_bytes();
            if s.first() == Some(&b'+') {
                s[0] = b' ';
            }
            s
        };
        return Ok(Prep { number, out_pre_spaces: 0, sign: 0, desc: desc.clone() });
    }
    let mut desc = desc.clone();
    let (val, max_dig) = if desc.multi_on {
        let m = pow10_f64(desc.multi).ok_or_else(|| FmtError::unsupported("\"V\" with more than 22 digits for a float"))?;
        desc.pre += desc.multi;
        match v {
            FloatVal::F4(f) => (f64::from(f * (m as f32)), 6),
            FloatVal::F8(f) => (f * m, 15),
        }
    } else {
        match v {
            FloatVal::F4(_) => (wide, 6),
            FloatVal::F8(_) => (wide, 15),
        }
    };
    let pre_len = c_fixed(val.abs(), 0).len() as i64;
    if pre_len >= max_dig {
        desc.post = 0;
    } else if pre_len + desc.post > max_dig {
        desc.post = max_dig - pre_len;
    }
    let orgnum = c_fixed(val, desc.post as usize);
    Ok(digits_prep(&orgnum, desc, false))
}

/// to_char for an integer: bigint rules, and also integer rules when the
/// value fits in 32 bits; refuse when the two would differ.
fn prepare_int8(v: i64, desc: &Desc) -> Result<Prep, FmtError> {
    if desc.roman {
        return match i32::try_from(v) {
            Ok(v) => Ok(roman_prep(desc, v)),
            Err(_) => Err(FmtError::int_range()),
        };
    }
    if desc.eeee {
        if desc.post > 1000 {
            return Err(FmtError::unsupported("\"EEEE\" with more than 1000 digits"));
        }
        let d = Decimal::from_u128(v < 0, u128::from(v.unsigned_abs()));
        let s = d.to_sci(desc.post as usize);
        let number = if s.starts_with('-') { s.into_bytes() } else { format!(" {s}").into_bytes() };
        return Ok(Prep { number, out_pre_spaces: 0, sign: 0, desc: desc.clone() });
    }
    let mut desc = desc.clone();
    let mut value = v;
    if desc.multi_on {
        // dtoi8(pow(10, multi)) then int8mul, both range-checked.
        let factor = u32::try_from(desc.multi).ok().filter(|&m| m <= 18).map(|m| 10i64.pow(m)).ok_or_else(FmtError::bigint_range)?;
        value = value.checked_mul(factor).ok_or_else(FmtError::bigint_range)?;
        desc.pre += desc.multi;
    }
    Ok(digits_prep(&value.to_string(), desc, true))
}

fn prepare_int4(v: i32, desc: &Desc) -> Prep {
    if desc.roman {
        return roman_prep(desc, v);
    }
    if desc.eeee {
        let mut s = c_sci_plus(f64::from(v), desc.post as usize).into_bytes();
        if s.first() == Some(&b'+') {
            s[0] = b' ';
        }
        return Prep { number: s, out_pre_spaces: 0, sign: 0, desc: desc.clone() };
    }
    let mut desc = desc.clone();
    let mut value = v;
    if desc.multi_on {
        // (int32) pow(10, multi) is INT_MIN on x86-64 once out of range, and
        // the multiplication wraps (PostgreSQL is built with -fwrapv).
        let factor = u32::try_from(desc.multi).ok().filter(|&m| m <= 9).map_or(i32::MIN, |m| 10i32.pow(m));
        value = value.wrapping_mul(factor);
        desc.pre += desc.multi;
    }
    digits_prep(&value.to_string(), desc, true)
}

// ---------------------------------------------------------------------------
// NUM_processor, to_char direction
// ---------------------------------------------------------------------------

struct ToChar {
    d: Desc,
    number: Vec<u8>,
    np: usize,
    out: Vec<u8>,
    sign: u8,
    sign_wrote: bool,
    num_count: i64,
    num_in: bool,
    num_curr: i64,
    out_pre_spaces: i64,
    last_relevant: Option<usize>,
}

impl ToChar {
    /// The number string's byte at `i`, with C's terminating NUL past the end.
    fn at(&self, i: usize) -> u8 {
        self.number.get(i).copied().unwrap_or(0)
    }

    fn last_relevant_is_point(&self) -> bool {
        self.last_relevant.is_some_and(|lr| self.at(lr) == b'.')
    }

    fn predec_space(&self) -> bool {
        !self.d.zero && self.np == 0 && self.at(0) == b'0' && self.d.post != 0
    }

    fn push_lsign(&mut self) {
        self.out.push(if self.sign == b'-' { b'-' } else { b'+' });
    }

    fn numpart(&mut self, key: Key) {
        if self.d.roman {
            return;
        }
        self.num_in = false;

        if !self.sign_wrote
            && (self.num_curr >= self.out_pre_spaces || (self.d.zero && self.d.zero_start == self.num_curr))
            && (!self.predec_space() || self.last_relevant_is_point())
        {
            if self.d.lsign_on {
                if self.d.lsign == LSign::Pre {
                    self.push_lsign();
                    self.sign_wrote = true;
                }
            } else if self.d.bracket {
                self.out.push(if self.sign == b'+' { b' ' } else { b'<' });
                self.sign_wrote = true;
            } else if self.sign == b'+' {
                if !self.d.fillmode {
                    self.out.push(b' ');
                }
                self.sign_wrote = true;
            } else if self.sign == b'-' {
                self.out.push(b'-');
                self.sign_wrote = true;
            }
        }

        if self.num_curr < self.out_pre_spaces && (self.d.zero_start > self.num_curr || !self.d.zero) {
            if !self.d.fillmode {
                self.out.push(b' ');
            }
        } else if self.d.zero && self.num_curr < self.out_pre_spaces && self.d.zero_start <= self.num_curr {
            self.out.push(b'0');
            self.num_in = true;
        } else {
            if self.at(self.np) == b'.' {
                // Both of PostgreSQL's branches write the decimal point here.
                self.out.push(b'.');
            } else if self.last_relevant.is_some_and(|lr| self.np > lr) && key != Key::Zero {
                // trailing zero dropped by FM
            } else if self.predec_space() {
                if !self.d.fillmode {
                    self.out.push(b' ');
                } else if self.last_relevant_is_point() {
                    self.out.push(b'0');
                }
            } else {
                self.out.push(self.at(self.np));
                self.num_in = true;
            }
            if self.np < self.number.len() {
                self.np += 1;
            }
        }

        let mut end = self.num_count + i64::from(self.out_pre_spaces != 0) + i64::from(self.d.decimal);
        if self.last_relevant == Some(self.np) {
            end = self.num_curr;
        }
        if self.num_curr + 1 == end {
            if self.sign_wrote && self.d.bracket {
                self.out.push(if self.sign == b'+' { b' ' } else { b'>' });
            } else if self.d.lsign_on && self.d.lsign == LSign::Post {
                self.push_lsign();
            }
        }
        self.num_curr += 1;
    }
}

/// FM: the last fraction digit that is not a trailing zero (or the point).
fn last_relevant_decnum(num: &[u8]) -> Option<usize> {
    let p = num.iter().position(|&c| c == b'.')?;
    let mut result = p;
    for (i, &c) in num.iter().enumerate().skip(p + 1) {
        if c != b'0' {
            result = i;
        }
    }
    Some(result)
}

fn get_th(num: &[u8], upper: bool) -> Result<&'static str, FmtError> {
    let last = match num.last() {
        Some(&c) if c.is_ascii_digit() => c,
        _ => return Err(FmtError::new("22P02", format!("\"{}\" is not a number", String::from_utf8_lossy(num)))),
    };
    let teen = num.len() > 1 && num[num.len() - 2] == b'1';
    let idx = match last {
        b'1' if !teen => 0,
        b'2' if !teen => 1,
        b'3' if !teen => 2,
        _ => 3,
    };
    Ok(if upper { ["ST", "ND", "RD", "TH"][idx] } else { ["st", "nd", "rd", "th"][idx] })
}

fn run_to_char(nodes: &[Node<'_>], prep: Prep) -> Result<String, FmtError> {
    let Prep { number, out_pre_spaces, sign, desc } = prep;
    let mut d = desc;
    if d.zero_start > 0 {
        d.zero_start -= 1;
    }
    if d.eeee {
        return Ok(String::from_utf8_lossy(&number).into_owned());
    }
    if d.roman {
        d.lsign = LSign::None;
        d.pre_lsign_num = 0;
        d.post = 0;
        d.pre = 0;
        let fm = d.fillmode;
        d.decimal = false;
        d.zero = false;
        d.blank = false;
        d.lsign_on = false;
        d.bracket = false;
        d.minus = false;
        d.plus = false;
        d.multi_on = false;
        d.eeee = false;
        d.fillmode = fm;
        d.roman = true;
    }

    let sign_wrote;
    if d.plus || d.minus {
        sign_wrote = !d.plus || d.minus;
    } else {
        if sign != b'-' && d.fillmode {
            d.bracket = false;
        }
        sign_wrote = sign == b'+' && d.fillmode && !d.lsign_on;
        if d.lsign == LSign::Pre && d.pre == d.pre_lsign_num {
            d.lsign = LSign::Post;
        }
    }
    let mut num_count = d.post + d.pre - 1;
    let mut last_relevant = None;
    if d.fillmode && d.decimal {
        last_relevant = last_relevant_decnum(&number);
        if let Some(lr) = last_relevant {
            if d.zero_end > out_pre_spaces {
                let last_zero_pos = (number.len() as i64 - 1).min(d.zero_end - out_pre_spaces);
                if (lr as i64) < last_zero_pos {
                    last_relevant = Some(last_zero_pos as usize);
                }
            }
        }
    }
    if !sign_wrote && out_pre_spaces == 0 {
        num_count += 1;
    }
    let mut p = ToChar {
        d,
        number,
        np: 0,
        out: Vec::new(),
        sign,
        sign_wrote,
        num_count,
        num_in: false,
        num_curr: 0,
        out_pre_spaces,
        last_relevant,
    };

    for node in nodes {
        let key = match node {
            Node::Lit(s) => {
                p.out.extend_from_slice(s.as_bytes());
                continue;
            }
            Node::Key(k) => *k,
        };
        match key {
            Key::Nine | Key::Zero | Key::Dec | Key::D => p.numpart(key),
            Key::Comma | Key::G => {
                if p.num_in {
                    p.out.push(b',');
                } else if !p.d.fillmode {
                    p.out.push(b' ');
                }
            }
            Key::L => p.out.push(b' '),
            Key::RnUpper | Key::RnLower => {
                let mut s: Vec<u8> = p.number.get(p.np..).unwrap_or_default().to_vec();
                if key == Key::RnLower {
                    s.make_ascii_lowercase();
                }
                if !p.d.fillmode && s.len() < 15 {
                    p.out.extend(std::iter::repeat_n(b' ', 15 - s.len()));
                }
                p.out.extend_from_slice(&s);
            }
            Key::ThUpper | Key::ThLower => {
                if p.d.roman || p.at(0) == b'#' || p.sign == b'-' || p.d.decimal {
                    continue;
                }
                let th = get_th(&p.number, key == Key::ThUpper)?;
                p.out.extend_from_slice(th.as_bytes());
            }
            Key::Mi => {
                if p.sign == b'-' {
                    p.out.push(b'-');
                } else if !p.d.fillmode {
                    p.out.push(b' ');
                }
            }
            Key::Pl => {
                if p.sign == b'+' {
                    p.out.push(b'+');
                } else if !p.d.fillmode {
                    p.out.push(b' ');
                }
            }
            Key::Sg => p.out.push(p.sign),
            Key::B | Key::C | Key::E | Key::Fm | Key::Pr | Key::Sp | Key::S | Key::V => {}
        }
    }
    // The C code builds a NUL-terminated string: anything after an embedded
    // NUL (a missing digit, SG with RN) is invisible.
    let end = p.out.iter().position(|&c| c == 0).unwrap_or(p.out.len());
    p.out.truncate(end);
    Ok(String::from_utf8_lossy(&p.out).into_owned())
}

// ---------------------------------------------------------------------------
// NUM_processor, to_number direction
// ---------------------------------------------------------------------------

struct FromChar<'i> {
    input: &'i [u8],
    p: usize,
    /// number[0] is the sign slot (' ', '-' or '+'), then digits and '.'.
    number: Vec<u8>,
    read_dec: bool,
    read_pre: i64,
    read_post: i64,
}

/// pg_mblen for UTF-8.
fn utf8_len(b: u8) -> usize {
    if b & 0x80 == 0 {
        1
    } else if b & 0xe0 == 0xc0 {
        2
    } else if b & 0xf0 == 0xe0 {
        3
    } else if b & 0xf8 == 0xf0 {
        4
    } else {
        1
    }
}

impl FromChar<'_> {
    fn overload(&self) -> bool {
        self.p >= self.input.len()
    }

    fn amount(&self, s: usize) -> bool {
        self.p + s <= self.input.len()
    }

    fn cur(&self) -> u8 {
        self.input.get(self.p).copied().unwrap_or(0)
    }

    fn eat_non_data(&mut self, n: usize) {
        for _ in 0..n {
            if self.overload() || b"0123456789.,+-".contains(&self.cur()) {
                break;
            }
            self.p += utf8_len(self.cur());
        }
    }

    fn numpart(&mut self, d: &Desc, key: Key) {
        let mut isread = false;
        if self.overload() {
            return;
        }
        if self.cur() == b' ' {
            self.p += 1;
        }
        if self.overload() {
            return;
        }
        if self.number[0] == b' ' && (key == Key::Zero || key == Key::Nine) && self.read_pre + self.read_post == 0 {
            if d.lsign_on && d.lsign == LSign::Pre {
                if self.amount(1) && self.cur() == b'-' {
                    self.p += 1;
                    self.number[0] = b'-';
                } else if self.amount(1) && self.cur() == b'+' {
                    self.p += 1;
                    self.number[0] = b'+';
                }
            } else if self.cur() == b'-' || (d.bracket && self.cur() == b'<') {
                self.number[0] = b'-';
                self.p += 1;
            } else if self.cur() == b'+' {
                self.number[0] = b'+';
                self.p += 1;
            }
        }
        if self.overload() {
            return;
        }
        if self.cur().is_ascii_digit() {
            if self.read_dec && self.read_post == d.post {
                return;
            }
            self.number.push(self.cur());
            if self.read_dec {
                self.read_post += 1;
            } else {
                self.read_pre += 1;
            }
            isread = true;
        } else if d.decimal && !self.read_dec && self.amount(1) && self.cur() == b'.' {
            self.number.push(b'.');
            self.read_dec = true;
            isread = true;
        }
        if self.overload() {
            return;
        }
        if self.number[0] == b' ' && self.read_pre + self.read_post > 0 {
            if d.lsign_on && isread && self.p + 1 < self.input.len() && !self.input[self.p + 1].is_ascii_digit() {
                let tmp = self.p;
                self.p += 1;
                if self.amount(1) && self.cur() == b'-' {
                    self.number[0] = b'-';
                } else if self.amount(1) && self.cur() == b'+' {
                    self.number[0] = b'+';
                }
                if self.number[0] == b' ' {
                    self.p = tmp;
                }
            } else if !isread && !d.lsign_on && (d.plus || d.minus) {
                let c = self.cur();
                if c == b'-' || c == b'+' {
                    self.number[0] = c;
                }
            }
        }
    }
}

/// Returns the number string ("<sign><digits>[.<digits>]") and the number of
/// fraction digits read.
fn run_from_char(nodes: &[Node<'_>], d: &Desc, input: &[u8]) -> (Vec<u8>, i64) {
    let mut f = FromChar { input, p: 0, number: vec![b' '], read_dec: false, read_pre: 0, read_post: 0 };
    for node in nodes {
        if f.overload() {
            break;
        }
        let key = match node {
            Node::Lit(_) => {
                // Each literal template character skips one input character.
                f.p += utf8_len(f.cur());
                continue;
            }
            Node::Key(k) => *k,
        };
        match key {
            Key::Nine | Key::Zero | Key::Dec | Key::D => f.numpart(d, key),
            Key::Comma | Key::G => {
                // NUM_processor never sets num_in when reading.
                if d.fillmode || f.cur() != b',' {
                    continue;
                }
            }
            Key::L => {
                f.eat_non_data(1);
                continue;
            }
            Key::ThUpper | Key::ThLower => {
                if d.decimal {
                    continue;
                }
                f.eat_non_data(2);
                continue;
            }
            Key::Mi | Key::Pl | Key::Sg => {
                let c = f.cur();
                let hit = match key {
                    Key::Mi => c == b'-',
                    Key::Pl => c == b'+',
                    _ => c == b'-' || c == b'+',
                };
                if hit {
                    f.number[0] = c;
                } else {
                    f.eat_non_data(1);
                    continue;
                }
            }
            Key::B | Key::C | Key::E | Key::Fm | Key::Pr | Key::Sp | Key::S | Key::V | Key::RnUpper | Key::RnLower => continue,
        }
        f.p += 1;
    }
    if f.number.len() > 1 && f.number.last() == Some(&b'.') {
        f.number.pop();
    }
    (f.number, f.read_post)
}

/// numeric_in(number, typmod(pre + multi + scale, scale)), then the "V"
/// correction (multiplication by numeric power(10, -multi)).
fn numeric_in_for_to_number(number: &[u8], d: &Desc, scale: i64) -> Result<String, FmtError> {
    let text = String::from_utf8_lossy(number).into_owned();
    let body = number.get(1..).unwrap_or_default();
    let (ip, fp) = match body.iter().position(|&c| c == b'.') {
        Some(i) => (&body[..i], &body[i + 1..]),
        None => (body, &body[body.len()..]),
    };
    if ip.is_empty() && fp.is_empty() {
        return Err(FmtError::new("22P02", format!("invalid input syntax for type numeric: \"{text}\"")));
    }
    let mut val = Decimal { neg: number.first() == Some(&b'-'), int: ip.to_vec(), frac: fp.to_vec() };
    val.normalize();
    let scale_u = scale.max(0) as usize;
    val.round(scale_u);
    let precision = d.pre + d.multi + scale;
    let maxdigits = precision - scale;
    if val.int.len() as i64 > maxdigits {
        let mut e = FmtError::new("22003", "numeric field overflow");
        e.detail = Some(format!(
            "A field with precision {precision}, scale {scale} must round to an absolute value less than {}{}.",
            if maxdigits > 0 { "10^" } else { "" },
            if maxdigits > 0 { maxdigits } else { 1 }
        ));
        return Err(e);
    }
    if d.multi_on {
        // numeric power(10, -n) has scale 16, so it is 0 beyond n = 16.
        const POW_SCALE: usize = 16;
        if d.multi as usize > POW_SCALE {
            val = Decimal { neg: false, int: Vec::new(), frac: Vec::new() };
        } else {
            val.shift_right(d.multi as usize);
        }
        val.round(scale_u + POW_SCALE);
    }
    Ok(val.to_text())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected PostgreSQL 15 result: output text, or (SQLSTATE, message, detail or "").
    enum W {
        Ok(&'static str),
        Err(&'static str, &'static str, &'static str),
    }

    fn float(v: &str) -> f64 {
        match v {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            _ => v.parse().expect("test float"),
        }
    }

    fn run(kind: &str, v: &str, fmt: &str) -> Result<String, FmtError> {
        match kind {
            "i4" => to_char(NumValue::Int4(v.parse().expect("test int")), fmt),
            "i8" => to_char(NumValue::Int8(v.parse().expect("test bigint")), fmt),
            "f4" => to_char(NumValue::Float4(float(v) as f32), fmt),
            "f8" => to_char(NumValue::Float8(float(v)), fmt),
            "num" => to_char(NumValue::Numeric(v), fmt),
            _ => to_number(v, fmt),
        }
    }

    /// Cases compared against a live PostgreSQL 15.18 server (C locale).
    /// kind: i4/i8 = to_char(integer/bigint), f4/f8 = real/double precision,
    /// num = numeric (numeric_out text), tonum = to_number(text, text).
    #[rustfmt::skip]
    const CASES: &[(&str, &str, &str, W)] = &[
        ("f8", "0.004", "9", W::Ok(" 0")),
        ("i4", "-999", "9", W::Ok("-#")),
        ("f4", "22.00", "99", W::Ok(" 22")),
        ("f8", "-0.5", "99", W::Ok(" -0")),
        ("f4", "12.345", "999", W::Ok("  12")),
        ("num", "999.9999", "999", W::Ok(" ###")),
        ("i4", "95", "9999", W::Ok("   95")),
        ("f8", "-2.5", "9999", W::Ok("   -2")),
        ("i8", "23", "99999999", W::Ok("       23")),
        ("f4", "1234567.89", "99999999", W::Ok("  1234568")),
        ("i4", "95", "0", W::Ok(" #")),
        ("i8", "-9223372036854775808", "0", W::Ok("-#")),
        ("num", "0.5", "00", W::Ok(" 01")),
        ("f8", "1e300", "00", W::Ok(" ##")),
        ("num", "1.5", "0000", W::Ok(" 0002")),
        ("i4", "101", "0000", W::Ok(" 0101")),
        ("i4", "-95", "0999", W::Ok("-0095")),
        ("i8", "13", "0999", W::Ok(" 0013")),
        ("f8", "0.9999", "9099", W::Ok("  001")),
        ("i4", "-1234", "9099", W::Ok("-1234")),
        ("i8", "999", "9990", W::Ok("  999")),
        ("num", "-12.345", "9990", W::Ok("  -12")),
        ("f4", "1234.5678", "9.9", W::Ok(" #.#")),
        ("i4", "1234", "9.9", W::Ok(" #.#")),
        ("num", "0.004", "99.99", W::Ok("   .00")),
        ("i8", "4000", "99.99", W::Ok(" ##.##")),
        ("i8", "-12", "999.999", W::Ok(" -12.000")),
        ("f8", "1e300", "999.999", W::Ok(" ###.")),
        ("f4", "-Infinity", "0.00", W::Ok("-#.")),
        ("num", "0", "0.00", W::Ok(" 0.00")),
        ("num", "99.995", "00.00", W::Ok(" ##.##")),
        ("f8", "99.995", "00.00", W::Ok(" ##.##")),
        ("num", "22.00", "9.0", W::Ok(" #.#")),
        ("i8", "13", "9.0", W::Ok(" #.#")),
        ("num", "12", "90.09", W::Ok(" 12.00")),
        ("i8", "1000000", "90.09", W::Ok(" ##.##")),
        ("f8", "0.5", ".99", W::Ok(" .##")),
        ("f4", "-0", ".99", W::Ok("-.##")),
        ("f4", "0.1", ".00", W::Ok(" .##")),
        ("f8", "1234567.89", ".00", W::Ok(" .##")),
        ("i4", "999", "9.", W::Ok(" #.")),
        ("f4", "100", "9.", W::Ok(" #.")),
        ("i8", "95", "99D99", W::Ok(" 95.00")),
        ("i4", "-12", "99D99", W::Ok("-12.00")),
        ("f8", "-0.0001", "9,999", W::Ok("    -0")),
        ("i8", "-999", "9,999", W::Ok("  -999")),
        ("num", "-Infinity", "9G999", W::Ok("-#,###")),
        ("f8", "22.00", "9G999", W::Ok("    22")),
        ("i4", "3999", "9,999.99", W::Ok(" 3,999.00")),
        ("f4", "0.1", "9,999.99", W::Ok("      .10")),
        ("i4", "-999", "999,999,999.99", W::Ok("        -999.00")),
        ("i8", "99999", "999,999,999.99", W::Ok("      99,999.00")),
        ("f4", "0.1", "FM9999", W::Ok("0")),
        ("f8", "-Infinity", "FM9999", W::Ok("-####")),
        ("f8", "1.23456789e10", "FM99.99", W::Ok("##.##")),
        ("i8", "23", "FM99.99", W::Ok("23.")),
        ("i8", "5", "FM9.9", W::Ok("5.")),
        ("f4", "0.005", "FM9.9", W::Ok("0.")),
        ("num", "3999.5", "FM0.00", W::Ok("#.##")),
        ("f8", "1e20", "FM0.00", W::Ok("#.")),
        ("f4", "-12.345", "FM9990.00", W::Ok("-12.35")),
        ("i8", "1234", "FM9990.00", W::Ok("1234.00")),
        ("i8", "2147483647", "FM999,999.90", W::Ok("###,###.##")),
        ("f8", "0.125", "FM999,999.90", W::Ok(".12")),
        ("i4", "0", "FM.99", W::Ok(".##")),
        ("i8", "99999", "FM.99", W::Ok(".##")),
        ("i8", "111", "S9999", W::Ok(" +111")),
        ("f8", "0.3333333333333333", "S9999", W::Ok("   +0")),
        ("f8", "0.5", "9999S", W::Ok("   0+")),
        ("f4", "1e-10", "9999S", W::Ok("   0+")),
        ("f4", "100", "S99.99", W::Ok("+##.##")),
        ("f8", "99.995", "S99.99", W::Ok("+##.##")),
        ("f8", "123456789012345678901234567890.123456789", "99.99S", W::Ok("##.+")),
        ("i4", "-95", "99.99S", W::Ok("95.00-")),
        ("num", "0.05", "SG9999", W::Ok("+   0")),
        ("f8", "99.995", "SG9999", W::Ok("+ 100")),
        ("i4", "3999", "9999SG", W::Ok("3999+")),
        ("num", "12.345", "9999SG", W::Ok("  12+")),
        ("num", "9.995", "MI9999", W::Ok("   10")),
        ("i4", "101", "MI9999", W::Ok("  101")),
        ("i8", "-999", "9999MI", W::Ok(" 999-")),
        ("i4", "21", "9999MI", W::Ok("  21 ")),
        ("f4", "Infinity", "PL9999", W::Ok("+ ####")),
        ("i4", "12", "PL9999", W::Ok("+   12")),
        ("f4", "-12.345", "9999PL", W::Ok("  -12 ")),
        ("f8", "1e20", "9999PL", W::Ok(" ####+")),
        ("num", "-1234.5678", "9999PR", W::Ok("<1235>")),
        ("i8", "112", "9999PR", W::Ok("  112 ")),
        ("f8", "0.125", "99.99PR", W::Ok("   .12 ")),
        ("i4", "-2147483648", "99.99PR", W::Ok("<##.##>")),
        ("i4", "2147483647", "FM9999PR", W::Ok("####")),
        ("f4", "-12.0", "FM9999PR", W::Ok("<12>")),
        ("f8", "-0.05", "L9999", W::Ok("    -0")),
        ("i4", "111", "L9999", W::Ok("   111")),
        ("f8", "-12.345", "9999L", W::Ok("  -12 ")),
        ("i4", "1", "9999L", W::Ok("    1 ")),
        ("i8", "12", "L 9,999.99", W::Ok("      12.00")),
        ("num", "-0.5", "L 9,999.99", W::Ok("       -.50")),
        ("f8", "-0.05", "RN", W::Ok("###############")),
        ("i8", "99999", "RN", W::Ok("###############")),
        ("f4", "-0.05", "rn", W::Ok("###############")),
        ("f8", "Infinity", "rn", W::Ok("###############")),
        ("f4", "1.5", "FMRN", W::Ok("II")),
        ("i8", "999", "FMRN", W::Ok("CMXCIX")),
        ("num", "-2.5", "FMrn", W::Ok("###############")),
        ("f8", "12", "FMrn", W::Ok("xii")),
        ("num", "-0.5", "9999TH", W::Ok("   -1")),
        ("f4", "1e20", "9999TH", W::Ok(" ####")),
        ("f4", "999.9999", "9999th", W::Ok(" 1000th")),
        ("f8", "-1", "9999th", W::Ok("   -1")),
        ("f4", "-12.345", "FM9999th", W::Ok("-12")),
        ("i4", "9999", "FM9999th", W::Ok("9999th")),
        ("i8", "-999", "999V99", W::Ok("-99900")),
        ("f4", "-2.5", "999V99", W::Ok("  -250")),
        ("i4", "3999", "9V9", W::Ok(" ##")),
        ("f8", "100", "9V9", W::Ok(" ##")),
        ("i8", "12", "V999", W::Ok(" ###")),
        ("i4", "-95", "V999", W::Ok("-###")),
        ("f4", "1.23456789e10", "99V", W::Ok(" ##")),
        ("i4", "4000", "99V", W::Ok(" ##")),
        ("f8", "-0.0001", "9.99EEEE", W::Ok("-1.00e-04")),
        ("i8", "12", "9.99EEEE", W::Ok(" 1.20e+01")),
        ("num", "999.9999", "9EEEE", W::Ok(" 10e+02")),
        ("f4", "-0.0001", "9EEEE", W::Ok("-1e-04")),
        ("num", "3999.5", "99.999EEEE", W::Ok(" 4.000e+03")),
        ("i8", "2147483647", "99.999EEEE", W::Ok(" 2.147e+09")),
        ("f4", "-12.0", ".99EEEE", W::Ok("-1.20e+01")),
        ("i8", "9223372036854775807", ".99EEEE", W::Ok(" 9.22e+18")),
        ("f8", "0.000000001234", "FM9.99EEEE", W::Err("42601", "\"EEEE\" is incompatible with other formats", "\"EEEE\" may only be used together with digit and decimal point patterns.")),
        ("i8", "101", "FM9.99EEEE", W::Err("42601", "\"EEEE\" is incompatible with other formats", "\"EEEE\" may only be used together with digit and decimal point patterns.")),
        ("i8", "1000000", "9999.99EEEE", W::Ok(" 1.00e+06")),
        ("num", "-12.0", "9999.99EEEE", W::Ok("-1.20e+01")),
        ("num", "0.05", "B9999", W::Ok("    0")),
        ("i4", "-12", "B9999", W::Ok("  -12")),
        ("f4", "3.4e38", "C9999", W::Ok(" ####")),
        ("f8", "-0.05", "C9999", W::Ok("   -0")),
        ("f4", "-0.05", "SP99", W::Ok(" -0")),
        ("i4", "-999", "SP99", W::Ok("-##")),
        ("f8", "2.5", "\"Value: \"9999", W::Ok("Value:     2")),
        ("num", "-1234.5678", "\"Value: \"9999", W::Ok("Value: -1235")),
        ("f8", "0.5", "abc9999xyz", W::Ok("a    0xyz")),
        ("num", "100", "abc9999xyz", W::Ok("a  100xyz")),
        ("f8", "123456789012345678901234567890.123456789", "9 9 9", W::Ok(" # # #")),
        ("num", "1.005", "9 9 9", W::Ok("     1")),
        ("f4", "3999.5", "9-9-9", W::Ok(" #-#-#")),
        ("num", "3999.5", "9-9-9", W::Ok(" #-#-#")),
        ("i8", "-2147483648", "$999.99", W::Ok("$-###.##")),
        ("f4", "-1234.5678", "$999.99", W::Ok("$-###.##")),
        ("num", "99.995", "€9,999.99", W::Ok("€   100.00")),
        ("i8", "112", "€9,999.99", W::Ok("€   112.00")),
        ("f8", "1234567.89", "FMS9999", W::Ok("+####")),
        ("f4", "0.1", "FMS9999", W::Ok("+0")),
        ("i8", "2147483647", "FMMI999", W::Ok("###")),
        ("f8", "-12.345", "FMMI999", W::Ok("-12")),
        ("f8", "1e-10", "FMPL999", W::Ok("+0")),
        ("i8", "-12", "FMPL999", W::Ok("-12")),
        ("num", "1.5", "FMSG999", W::Ok("+2")),
        ("f4", "-1234.5678", "FMSG999", W::Ok("-###")),
        ("i8", "-2147483648", "S0000", W::Ok("-####")),
        ("f8", "12.345", "S0000", W::Ok("+0012")),
        ("f4", "-0.5", "0000S", W::Ok("0000-")),
        ("i4", "-1234", "0000S", W::Ok("1234-")),
        ("i8", "22", "FM0000S", W::Ok("0022+")),
        ("f8", "0.9999", "FM0000S", W::Ok("0001+")),
        ("f4", "Infinity", "SG0.00", W::Ok("+#.")),
        ("f8", "1.23456789e10", "SG0.00", W::Ok("+#.##")),
        ("i4", "1000000", "9.99MI", W::Ok("#.## ")),
        ("f8", "-1234.5678", "9.99MI", W::Ok("#.##-")),
        ("i8", "111", "MI9.99", W::Ok(" #.##")),
        ("f8", "-12.0", "MI9.99", W::Ok("-#.##")),
        ("i8", "21", "PR9", W::Err("42601", "\"9\" must be ahead of \"PR\"", "")),
        ("f8", "3999.5", "PR9", W::Err("42601", "\"9\" must be ahead of \"PR\"", "")),
        ("i4", "12345", "9PR9", W::Err("42601", "\"9\" must be ahead of \"PR\"", "")),
        ("num", "0.000000001234", "9PR9", W::Err("42601", "\"9\" must be ahead of \"PR\"", "")),
        ("num", "-12.0", "S9S", W::Err("42601", "cannot use \"S\" twice", "")),
        ("f8", "0.125", "S9S", W::Err("42601", "cannot use \"S\" twice", "")),
        ("num", "3999.5", "S9MI", W::Err("42601", "cannot use \"S\" and \"MI\" together", "")),
        ("i8", "99999", "S9MI", W::Err("42601", "cannot use \"S\" and \"MI\" together", "")),
        ("num", "0.1", "9.9.9", W::Err("42601", "multiple decimal points", "")),
        ("i8", "-999", "9.9.9", W::Err("42601", "multiple decimal points", "")),
        ("f4", "0.3333333333333333", "V9.9", W::Err("42601", "cannot use \"V\" and decimal point together", "")),
        ("num", "100", "V9.9", W::Err("42601", "cannot use \"V\" and decimal point together", "")),
        ("i8", "1234", "9.9V9", W::Err("42601", "cannot use \"V\" and decimal point together", "")),
        ("i4", "-95", "9.9V9", W::Err("42601", "cannot use \"V\" and decimal point together", "")),
        ("i8", "13", "EEEE9", W::Err("42601", "\"EEEE\" must be the last pattern used", "")),
        ("f8", "0.000000001234", "EEEE9", W::Err("42601", "\"EEEE\" must be the last pattern used", "")),
        ("i8", "-1", "9EEEEEEEE", W::Err("42601", "cannot use \"EEEE\" twice", "")),
        ("i4", "95", "9EEEEEEEE", W::Err("42601", "cannot use \"EEEE\" twice", "")),
        ("f8", "100", "RNEEEE", W::Err("42601", "\"EEEE\" is incompatible with other formats", "\"EEEE\" may only be used together with digit and decimal point patterns.")),
        ("num", "-0.5", "RNEEEE", W::Err("42601", "\"EEEE\" is incompatible with other formats", "\"EEEE\" may only be used together with digit and decimal point patterns.")),
        ("f4", "1234567.89", "9EEEERN", W::Err("42601", "\"EEEE\" must be the last pattern used", "")),
        ("f8", "1.23456789e10", "9EEEERN", W::Err("42601", "\"EEEE\" must be the last pattern used", "")),
        ("f8", "0.05", "TH", W::Err("22P02", "\".\" is not a number", "")),
        ("i4", "999", "TH", W::Err("22P02", "\".\" is not a number", "")),
        ("i4", "95", "99 \"lit\\\"x\" 99", W::Ok("   lit\"x  95")),
        ("i8", "-95", "99 \"lit\\\"x\" 99", W::Ok("   lit\"x -95")),
        ("f8", "-12.345", "FM9.99TH", W::Ok("-#.##")),
        ("num", "-0.0001", "FM9.99TH", W::Ok("0.")),
        ("f4", "0", "9999.9999", W::Ok("     .0000")),
        ("i4", "111", "9999.9999", W::Ok("  111.0000")),
        ("f4", "99.995", "9D9D", W::Err("42601", "multiple decimal points", "")),
        ("num", "-1", "9D9D", W::Err("42601", "multiple decimal points", "")),
        ("i8", "4000", "0.9", W::Ok(" #.#")),
        ("i4", "9999", "0.9", W::Ok(" #.#")),
        ("i4", "1234", "SG9.9", W::Ok("+#.#")),
        ("num", "1234.5678", "SG9.9", W::Ok("+#.#")),
        ("num", "3999.5", "FMSG9.9", W::Ok("+#.#")),
        ("f8", "99.995", "FMSG9.9", W::Ok("+#.#")),
        ("f8", "0.05", "FM99999.999999", W::Ok(".05")),
        ("f4", "999.9999", "FM99999.999999", W::Ok("1000.")),
        ("i8", "111", "999999999999999999999.99", W::Ok("                   111.00")),
        ("f8", "-0", "999999999999999999999.99", W::Ok("                     -.00")),
        ("f8", "0.05", "FM0999.9900", W::Ok("0000.0500")),
        ("i8", "1234", "FM0999.9900", W::Ok("1234.0000")),
        ("num", "999.9999", "09.90", W::Ok(" ##.##")),
        ("f8", "-Infinity", "09.90", W::Ok("-##.##")),
        ("f8", "-0.5", "FM09.90", W::Ok("-00.50")),
        ("i8", "23", "FM09.90", W::Ok("23.00")),
        ("num", "9.995", "9,9,9,9", W::Ok("     1,0")),
        ("i8", "0", "9,9,9,9", W::Ok("       0")),
        ("f4", "9.995", "FM9,9,9,9", W::Ok("1,0")),
        ("f8", "-2.5", "FM9,9,9,9", W::Ok("-2")),
        ("f4", "1234.5678", "G999", W::Ok("  ###")),
        ("i4", "-999", "G999", W::Ok(" -999")),
        ("f8", "123456.7", "9G", W::Ok(" #,")),
        ("i4", "-95", "9G", W::Ok("-#,")),
        ("f8", "-1", ",999", W::Ok("   -1")),
        ("num", "1.005", ",999", W::Ok("    1")),
        ("f8", "0.05", "L", W::Ok(" ")),
        ("i4", "-12", "L", W::Ok(" ")),
        ("i8", "99999", "MI", W::Ok(" ")),
        ("f4", "-Infinity", "MI", W::Ok("-")),
        ("f4", "123456.7", "PL", W::Ok("+")),
        ("f8", "-0.05", "PL", W::Ok(" ")),
        ("i4", "999", "SG", W::Ok("+")),
        ("f8", "123456789012345678901234567890.123456789", "SG", W::Ok("+")),
        ("i4", "-1", "S", W::Ok("")),
        ("f8", "3999.5", "S", W::Ok("")),
        ("f8", "-0.0001", "PR", W::Ok("")),
        ("f4", "0.005", "PR", W::Ok("")),
        ("i8", "23", "FM", W::Ok("")),
        ("f4", "-0.5", "FM", W::Ok("")),
        ("f4", "1234.5678", "D", W::Ok(" .")),
        ("i8", "-12", "D", W::Ok("-.")),
        ("num", "0.9999", ".", W::Ok(" .")),
        ("f8", "2.5", ".", W::Ok(" .")),
        ("f8", "1.005", "999.", W::Ok("   1")),
        ("num", "1.005", "999.", W::Ok("   1")),
        ("f4", "99.995", "FM999.", W::Ok("100")),
        ("i8", "1", "FM999.", W::Ok("1")),
        ("i8", "111", "SFM999", W::Ok("+111")),
        ("num", "0.000000001234", "SFM999", W::Ok("+0")),
        ("f8", "1e-10", "FMS999D99", W::Ok("+0.")),
        ("num", "0.05", "FMS999D99", W::Ok("+.05")),
        ("f8", "2.5", "9999V", W::Ok("    2")),
        ("num", "-0.0001", "9999V", W::Ok("    0")),
        ("i4", "-95", "rn9", W::Ok("###############")),
        ("num", "-0.5", "rn9", W::Ok("###############")),
        ("i8", "3999", "FM9999TH", W::Ok("3999TH")),
        ("f4", "-Infinity", "FM9999TH", W::Ok("-####")),
        ("i4", "95", "9th", W::Ok(" #")),
        ("f4", "0.1", "9th", W::Ok(" 0th")),
        ("i8", "9223372036854775807", "99PL", W::Ok(" ##+")),
        ("f8", "1234567.89", "99PL", W::Ok(" ##+")),
        ("i4", "999", "PL99.99", W::Ok("+ ##.##")),
        ("num", "NaN", "PL99.99", W::Ok("+ ##.##")),
        ("num", "1.005", "99.99PL", W::Ok("  1.01+")),
        ("f8", "0.000000001234", "99.99PL", W::Ok("   .00+")),
        ("num", "-1", "FMPL99.99", W::Ok("-1.")),
        ("f8", "-0.05", "FMPL99.99", W::Ok("-.05")),
        ("f8", "-1234.5678", "B", W::Ok("")),
        ("f4", "-2.5", "B", W::Ok("")),
        ("f4", "3999.5", "BEEEE", W::Err("42601", "\"EEEE\" is incompatible with other formats", "\"EEEE\" may only be used together with digit and decimal point patterns.")),
        ("i8", "2147483647", "BEEEE", W::Err("42601", "\"EEEE\" is incompatible with other formats", "\"EEEE\" may only be used together with digit and decimal point patterns.")),
        ("i4", "22", "9BEEEE", W::Ok(" 2e+01")),
        ("f8", "1.5", "9BEEEE", W::Ok(" 2e+00")),
        ("i4", "999", "9.9999999999EEEE", W::Ok(" 9.9900000000e+02")),
        ("i8", "5", "9.9999999999EEEE", W::Ok(" 5.0000000000e+00")),
        ("i8", "112", "0000.00000000", W::Ok(" 0112.00000000")),
        ("i4", "23", "0000.00000000", W::Ok(" 0023.00000000")),
        ("f4", "3999.5", "FM0000.00000000", W::Ok("3999.50")),
        ("i4", "-12", "FM0000.00000000", W::Ok("-0012.00000000")),
        ("f4", "0.3333333333333333", "9V999999999999", W::Ok("  333333331968")),
        ("f8", "1.23456789e10", "9V999999999999", W::Ok(" #############")),
        ("num", "0.05", "99999999999999999999V99", W::Ok("                      5")),
        ("f8", "1234567.89", "99999999999999999999V99", W::Ok("              123456789")),
        ("i4", "999", "FM9.99999999999999999999", W::Ok("#.####################")),
        ("f8", "999.9999", "FM9.99999999999999999999", W::Ok("#.###########")),
        ("num", "99.995", "99,999,999,999,999,999,999,999,999,999,999", W::Ok("                                        100")),
        ("i8", "-999", "99,999,999,999,999,999,999,999,999,999,999", W::Ok("                                       -999")),
        ("f8", "1.005", "s9999", W::Ok("   +1")),
        ("num", "-0.05", "s9999", W::Ok("   +0")),
        ("f8", "-1234.5678", "9999mi", W::Ok("1235-")),
        ("i4", "-1234", "9999mi", W::Ok("1234-")),
        ("i8", "0", "9999pl", W::Ok("    0+")),
        ("f4", "-0", "9999pl", W::Ok("   -0 ")),
        ("i8", "95", "9999sg", W::Ok("  95+")),
        ("f4", "3.4e38", "9999sg", W::Ok("####+")),
        ("num", "-2.5", "9999pr", W::Ok("   <3>")),
        ("f4", "12", "9999pr", W::Ok("   12 ")),
        ("num", "22.00", "l999", W::Ok("   22")),
        ("f8", "-0", "l999", W::Ok("   -0")),
        ("i4", "5", "999d99", W::Ok("   5.00")),
        ("num", "0.004", "999d99", W::Ok("    .00")),
        ("f4", "1.23456789e10", "fm999.99", W::Ok("###.")),
        ("i8", "-95", "fm999.99", W::Ok("-95.")),
        ("i4", "-999", "9.99eeee", W::Ok("-9.99e+02")),
        ("f4", "9.995", "9.99eeee", W::Ok(" 9.99e+00")),
        ("f4", "-1", "999g999", W::Ok("      -1")),
        ("f8", "-1", "999g999", W::Ok("      -1")),
        ("i8", "12", "FMSG9999TH", W::Ok("+12TH")),
        ("f4", "0.05", "FMSG9999TH", W::Ok("+0TH")),
        ("i8", "-95", "MIPL9", W::Ok("- #")),
        ("f8", "-Infinity", "MIPL9", W::Ok("- #")),
        ("i4", "22", "PLMI9", W::Ok("+ #")),
        ("num", "-0.05", "PLMI9", W::Ok("+ 0")),
        ("i8", "13", "SGPR9", W::Err("42601", "cannot use \"PR\" and \"S\"/\"PL\"/\"MI\"/\"SG\" together", "")),
        ("i4", "112", "SGPR9", W::Err("42601", "cannot use \"PR\" and \"S\"/\"PL\"/\"MI\"/\"SG\" together", "")),
        ("i8", "23", "E9", W::Ok("E #")),
        ("f4", "-Infinity", "E9", W::Ok("E-#")),
        ("i4", "-95", "e99", W::Ok("e-95")),
        ("num", "0.004", "e99", W::Ok("e  0")),
        ("num", "0", "9 E", W::Ok(" 0 E")),
        ("i8", "2147483647", "9 E", W::Ok(" # E")),
        ("i8", "-9223372036854775808", "\"9\"9", W::Ok("9-#")),
        ("i4", "111", "\"9\"9", W::Ok("9 #")),
        ("num", "0.05", "\\\"9", W::Ok("\" 0")),
        ("i8", "-95", "\\\"9", W::Ok("\"-#")),
        ("i8", "-1234", "99\\9", W::Ok("-##\\#")),
        ("f8", "1e20", "99\\9", W::Ok(" ##\\#")),
        ("f8", "0.5", "9SP9", W::Ok("  0")),
        ("i4", "1", "9SP9", W::Ok("  1")),
        ("i8", "12", "C", W::Ok("")),
        ("i4", "23", "C", W::Ok("")),
        ("i8", "-9223372036854775808", "cSp9", W::Ok("p-#")),
        ("f8", "1234.5678", "cSp9", W::Ok("p+#")),
        ("tonum", "0.5-", "9", W::Ok("0")),
        ("tonum", "+", "9", W::Err("22P02", "invalid input syntax for type numeric: \"+\"", "")),
        ("tonum", "-1234.5", "99", W::Ok("-12")),
        ("tonum", "abc", "99", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", ".", "999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "1.2+", "999", W::Ok("12")),
        ("tonum", "-", "9999", W::Err("22P02", "invalid input syntax for type numeric: \"-\"", "")),
        ("tonum", "1.2.3", "9999", W::Ok("12")),
        ("tonum", "9.999", "99999", W::Ok("9999")),
        ("tonum", "abc", "99999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "-12", "999.99", W::Ok("-12")),
        ("tonum", ".", "999.99", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "1 2 3", "9.99", W::Err("22003", "numeric field overflow", "A field with precision 1, scale 0 must round to an absolute value less than 10^1.")),
        ("tonum", "abc123", "9.99", W::Ok("1")),
        ("tonum", "123-", "99D99", W::Err("22003", "numeric field overflow", "A field with precision 2, scale 0 must round to an absolute value less than 10^2.")),
        ("tonum", "x12", "99D99", W::Ok("12")),
        ("tonum", "1.2.3", "9,999", W::Ok("12")),
        ("tonum", "abc", "9,999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "$1,234.50", "9G999", W::Ok("12")),
        ("tonum", "+", "9G999", W::Err("22P02", "invalid input syntax for type numeric: \"+\"", "")),
        ("tonum", "12,3", "9,999.99", W::Ok("123")),
        ("tonum", "99999999999", "9,999.99", W::Err("22003", "numeric field overflow", "A field with precision 4, scale 0 must round to an absolute value less than 10^4.")),
        ("tonum", "-1,234.56", "FM9,999.99", W::Ok("-1234.5")),
        ("tonum", "99999999999", "FM9,999.99", W::Err("22003", "numeric field overflow", "A field with precision 4, scale 0 must round to an absolute value less than 10^4.")),
        ("tonum", "-1", "99G999D9S", W::Ok("-1")),
        ("tonum", ".", "99G999D9S", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "12.345", "S999", W::Ok("12")),
        ("tonum", "€12", "S999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "12.345", "999S", W::Ok("12")),
        ("tonum", "+", "999S", W::Err("22P02", "invalid input syntax for type numeric: \"+\"", "")),
        ("tonum", "1 2 3", "S99.99", W::Err("22003", "numeric field overflow", "A field with precision 2, scale 0 must round to an absolute value less than 10^2.")),
        ("tonum", "abc123", "S99.99", W::Ok("12")),
        ("tonum", "1-2-3", "99.99S", W::Err("22003", "numeric field overflow", "A field with precision 2, scale 0 must round to an absolute value less than 10^2.")),
        ("tonum", "12.345", "99.99S", W::Ok("12.34")),
        ("tonum", "1.2.3", "MI999", W::Ok("12")),
        ("tonum", "-", "MI999", W::Err("22P02", "invalid input syntax for type numeric: \"-\"", "")),
        ("tonum", "€1,234.50", "999MI", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "1.23-", "999MI", W::Ok("12")),
        ("tonum", "", "PL999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "123+", "PL999", W::Ok("123")),
        ("tonum", "-1.23", "999PL", W::Ok("-12")),
        ("tonum", " ", "999PL", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "abc", "SG999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "12.345", "SG999", W::Ok("12")),
        ("tonum", "１２", "999SG", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "-.5", "999SG", W::Ok("-5")),
        ("tonum", "<123>", "999PR", W::Ok("-123")),
        ("tonum", " ", "999PR", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "-.5", "99.99PR", W::Ok("-0.5")),
        ("tonum", "-1,234.56", "99.99PR", W::Err("22003", "numeric field overflow", "A field with precision 2, scale 0 must round to an absolute value less than 10^2.")),
        ("tonum", "abc", "L999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "22nd", "L999", W::Ok("22")),
        ("tonum", "1,2,3", "L9,999.99", W::Ok("123")),
        ("tonum", "", "L9,999.99", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "-", "$999.99", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "1,234", "$999.99", W::Ok("234")),
        ("tonum", "12", "999th", W::Ok("12")),
        ("tonum", "abc", "999th", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", ".5", "9999TH", W::Ok("5")),
        ("tonum", " ", "9999TH", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "12 -", "99V9", W::Ok("1.2000000000000000")),
        ("tonum", ".", "99V9", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "-1234.5", "9V99", W::Ok("-1.2300000000000000")),
        ("tonum", " ", "9V99", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "12.", "999V", W::Ok("12.0000000000000000")),
        ("tonum", "１２", "999V", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "12.", "0000", W::Ok("12")),
        ("tonum", " ", "0000", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "-1,234.56", "0.00", W::Err("22003", "numeric field overflow", "A field with precision 1, scale 0 must round to an absolute value less than 10^1.")),
        ("tonum", " ", "0.00", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "", "FM999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "0.5-", "FM999", W::Ok("5")),
        ("tonum", " 123", "FM9.999999MI", W::Err("22003", "numeric field overflow", "A field with precision 1, scale 0 must round to an absolute value less than 10^1.")),
        ("tonum", "1.2+", "FM9.999999MI", W::Ok("1.2")),
        ("tonum", "$1,234.50", "\"abc\"999", W::Ok("234")),
        ("tonum", "1st", "\"abc\"999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "  12.3", "x999", W::Ok("12")),
        ("tonum", "1st", "x999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "-1.23", "999 999", W::Ok("-12")),
        ("tonum", "", "999 999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "-12", "9 9 9", W::Ok("-1")),
        ("tonum", " ", "9 9 9", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", " ", "9-9-9", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "$1,234.50", "9-9-9", W::Ok("3")),
        ("tonum", "22nd", "99.9", W::Ok("22")),
        ("tonum", "", "99.9", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "1,2,3", ".99", W::Err("22003", "numeric field overflow", "A field with precision 0, scale 0 must round to an absolute value less than 1.")),
        ("tonum", "-.5", ".99", W::Ok("0.5")),
        ("tonum", "12", "9.", W::Err("22003", "numeric field overflow", "A field with precision 1, scale 0 must round to an absolute value less than 10^1.")),
        ("tonum", "1st", "9.", W::Ok("1")),
        ("tonum", "123+", "B999", W::Ok("123")),
        ("tonum", " ", "B999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "123+", "C999", W::Ok("123")),
        ("tonum", "€1,234.50", "C999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "- 12", "RN", W::Err("0A000", "\"RN\" not supported for input", "")),
        ("tonum", "€1,234.50", "9.9EEEE", W::Err("0A000", "\"EEEE\" not supported for input", "")),
        ("tonum", "99999999999", "9999999999999999999", W::Ok("99999999999")),
        ("tonum", "", "9999999999999999999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "  12.3", "9.99999999999999999999", W::Err("22003", "numeric field overflow", "A field with precision 2, scale 1 must round to an absolute value less than 10^1.")),
        ("tonum", "1.23-", "9.99999999999999999999", W::Ok("1.23")),
        ("tonum", "12,454.8-", "99V9999999999999999999", W::Ok("0.0000000000000000")),
        ("tonum", ".", "99V9999999999999999999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "abc123", "S9.9", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "99999999999", "S9.9", W::Err("22003", "numeric field overflow", "A field with precision 1, scale 0 must round to an absolute value less than 10^1.")),
        ("tonum", "1,2,3", "FMS999", W::Ok("12")),
        ("tonum", ".", "FMS999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", ".", "9.9S", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "+123", "9.9S", W::Err("22003", "numeric field overflow", "A field with precision 1, scale 0 must round to an absolute value less than 10^1.")),
        ("tonum", "x12", "G999", W::Ok("12")),
        ("tonum", "abc", "G999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "123", "FM9G999", W::Ok("123")),
        ("tonum", "-", "FM9G999", W::Err("22P02", "invalid input syntax for type numeric: \"-\"", "")),
        ("tonum", "-.5", "9.9th", W::Ok("-0.5")),
        ("tonum", "12€", "9.9th", W::Err("22003", "numeric field overflow", "A field with precision 1, scale 0 must round to an absolute value less than 10^1.")),
        ("tonum", "12>", "999L", W::Ok("12")),
        ("tonum", ".", "999L", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "1.23-", "MI9.99", W::Ok("1.23")),
        ("tonum", "1,2,3", "MI9.99", W::Err("22003", "numeric field overflow", "A field with precision 1, scale 0 must round to an absolute value less than 10^1.")),
        ("tonum", "１２", "9.99MI", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "12,454.8-", "9.99MI", W::Err("22003", "numeric field overflow", "A field with precision 1, scale 0 must round to an absolute value less than 10^1.")),
        ("tonum", "22nd", "SG9.99", W::Err("22003", "numeric field overflow", "A field with precision 1, scale 0 must round to an absolute value less than 10^1.")),
        ("tonum", "<1>", "SG9.99", W::Ok("1")),
        ("tonum", "1,2,3", "9.99PL", W::Err("22003", "numeric field overflow", "A field with precision 1, scale 0 must round to an absolute value less than 10^1.")),
        ("tonum", "-1.23", "9.99PL", W::Ok("-1.23")),
        ("tonum", "123+", "PL9.99", W::Err("22003", "numeric field overflow", "A field with precision 1, scale 0 must round to an absolute value less than 10^1.")),
        ("tonum", "0.5-", "PL9.99", W::Ok("-0.5")),
        ("tonum", "0.5-", "FM999PR", W::Ok("5")),
        ("tonum", ".", "FM999PR", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("f4", "NaN", "FM", W::Ok("")),
        ("tonum", "6b2040251", "MI", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "605", ".S", W::Err("22003", "numeric field overflow", "A field with precision 0, scale 0 must round to an absolute value less than 1.")),
        ("tonum", ",08>1€44", "fm9EEEE9Bg", W::Err("42601", "\"EEEE\" is incompatible with other formats", "\"EEEE\" may only be used together with digit and decimal point patterns.")),
        ("f8", "-3.8102575266203885e-07", "\"a\\\"b\"", W::Ok("a\"b")),
        ("num", "403597093087.35", "gPLefm.dmi", W::Err("42601", "multiple decimal points", "")),
        ("f8", "-3.271884754093101e-05", "L 99.99eeeeEEEE.d", W::Err("42601", "cannot use \"EEEE\" twice", "")),
        ("num", "87139.585", "\\\"999\"a\\\"b\"VD", W::Err("42601", "cannot use \"V\" and decimal point together", "")),
        ("f4", "-32341.2326831323531435", "RNFM0E0VrnEPL", W::Ok("###############E###############E")),
        ("f4", "-7.79", "RN\"x\"sgmi9999€9", W::Ok("###############x")),
        ("i8", "-77", "PL99.99RN0THe", W::Ok(" ###############e")),
        ("i4", "778472921", "\\\"€.th-fme$", W::Ok("\"€.-e$")),
        ("num", "0", "THFM0PL0", W::Ok("TH0+0")),
        ("tonum", "-3", "THPR99.99Spl", W::Err("42601", "\"9\" must be ahead of \"PR\"", "")),
        ("tonum", "", ".PRd", W::Err("42601", "multiple decimal points", "")),
        ("f8", "76491.2", "9egEEEEeeee.dv", W::Err("42601", "cannot use \"EEEE\" twice", "")),
        ("i8", "-6829518976030069077", "rn\"a\\\"b\"", W::Err("22003", "integer out of range", "")),
        ("i8", "16", "99.99prplSVL", W::Err("42601", "cannot use \"S\" and \"PL\"/\"MI\"/\"SG\"/\"PR\" together", "")),
        ("i8", "7140058676033780211", "rn SP.", W::Err("22003", "integer out of range", "")),
        ("i8", "-360075", "99.999", W::Ok("-##.###")),
        ("num", "26754.5", "FM9.99", W::Ok("#.##")),
        ("num", "-65053551.35", "vgs9FM9.99d rn9", W::Err("42601", "cannot use \"V\" and decimal point together", "")),
        ("i8", "-2863694405561829365", "pl-0000FM9.99RNB", W::Err("22003", "integer out of range", "")),
        ("i8", "3395735803128240188", "\"a\\\"b\"gLCmiPL", W::Ok("a\"b   +")),
        ("num", "17658119", "thGv-90\"x\"\"x\"", W::Ok(" - ##xx")),
        ("tonum", "€3532", "9d.eC9eeeesG", W::Err("42601", "multiple decimal points", "")),
        ("f4", "1", "€dG9EEEEs", W::Err("42601", "\"EEEE\" must be the last pattern used", "")),
        ("num", "0.65000", "\"a\\\"b\".S-C0EEEEe99.99", W::Err("42601", "\"EEEE\" is incompatible with other formats", "\"EEEE\" may only be used together with digit and decimal point patterns.")),
        ("num", "42335", "9EEEERNS", W::Err("42601", "\"EEEE\" must be the last pattern used", "")),
        ("f4", "-9.5", ",€", W::Ok(" €")),
        ("i8", "-51", "gVTH", W::Ok(" ")),
        ("num", "92.4381319991133637", "TH99.99", W::Ok(" 92.44")),
        ("tonum", "a3093235S", "99.99RN9999C-prth\"x\"eeee", W::Err("42601", "\"EEEE\" is incompatible with other formats", "\"EEEE\" may only be used together with digit and decimal point patterns.")),
        ("i8", "-1343137854", "00000Emiseeeev90000", W::Err("42601", "cannot use \"S\" and \"PL\"/\"MI\"/\"SG\"/\"PR\" together", "")),
        ("f4", "9.0", "G.RN\\\"", W::Ok("              IX\"")),
        ("f8", "690.0788683701453", "0FMGB", W::Ok("#,")),
        ("i8", "766011562", "€eeeepreeeesSPG", W::Err("42601", "\"EEEE\" must be the last pattern used", "")),
        ("tonum", "7", "vSth", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "06$3b3", "SPeCEEEE", W::Err("0A000", "\"EEEE\" not supported for input", "")),
        ("tonum", "+67849043", "L eeee9MIV\"x\"pl", W::Err("42601", "\"EEEE\" must be the last pattern used", "")),
        ("tonum", "70<.6a349", "999.99\"x\"9VMI9999", W::Err("42601", "cannot use \"V\" and decimal point together", "")),
        ("num", "56193999275424706297.595", "RN\"x\"S", W::Err("22003", "integer out of range", "")),
        ("f8", "719.625570011277", "99.999", W::Ok(" ##.###")),
        ("f4", "2.95", "9999-CTH", W::Ok("    3-RD")),
        ("i8", "-7", "0preeee9999PRFM", W::Err("42601", "\"EEEE\" is incompatible with other formats", "\"EEEE\" may only be used together with digit and decimal point patterns.")),
        ("num", "999999999999.9999999999999999", "SP9€\"a\\\"b\"fm,", W::Ok("#€a\"b,")),
        ("f4", "167.62299121734372", "B", W::Ok("")),
        ("f8", "159.96147163417822", "pr", W::Ok("")),
        ("num", "-99.99999", "9vCFM9.99$€GB", W::Err("42601", "cannot use \"V\" and decimal point together", "")),
        ("num", "-23.5", "dv9SP-B", W::Err("42601", "cannot use \"V\" and decimal point together", "")),
        ("i8", "-543186237035628179", "9FM$\"a\\\"b\"", W::Ok("-#$a\"b")),
        ("i8", "-730375164", ".miplB0", W::Ok(".- #")),
        ("f8", "-38255852594.42802", ".$9Cmi", W::Ok(".$#-")),
        ("num", "-Infinity", "ETH", W::Ok("E")),
        ("f4", "9.0", "prprs.rn€9", W::Err("42601", "cannot use \"S\" and \"PL\"/\"MI\"/\"SG\"/\"PR\" together", "")),
        ("f4", "-996.9172305594751", ".fmd$fm", W::Err("42601", "multiple decimal points", "")),
        ("tonum", "18251", "gSG", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("i4", "-1815932941", "\"x\"\"a\\\"b\"plVG99.990", W::Err("42601", "cannot use \"V\" and decimal point together", "")),
        ("f8", "50.27232802215781", "0SG9RN", W::Ok("")),
        ("num", "2551.9977976714557561", "EEEE-9-MI", W::Err("42601", "\"EEEE\" must be the last pattern used", "")),
        ("f8", "-1.7976931348623157e308", "9.99EEEE", W::Ok("-1.80e+308")),
        ("f8", "5", "9V9999999999999999999999", W::Ok(" 49999999999999995805696")),
        ("f4", "5", "9V9999999999999999999999", W::Ok(" 49999998890981541806080")),
        ("f4", "1.1", "99V999999999999", W::Ok("  1100000002048")),
        ("f8", "1.1", "99V999999999999", W::Ok("  1100000000000")),
        ("f8", "1.5", "FM9.0000000000000000000", W::Ok("1.50000000000000")),
        ("f8", "123456789012.5", "FM999999999999.000000", W::Ok("123456789012.500")),
        ("f4", "12345.5", "FM99999.0000", W::Ok("12345.5")),
        ("f4", "0.5", "FM0.0000000", W::Ok("0.50000")),
        ("f8", "0.5", "FM0.0000000", W::Ok("0.5000000")),
        ("f8", "0", "FM0.0", W::Ok("0.0")),
        ("f8", "0", "FM9.9", W::Ok("0.")),
        ("f8", "0", "9.9", W::Ok("  .0")),
        ("num", "0", "FM9.9", W::Ok("0.")),
        ("num", "0", "FM9.99", W::Ok("0.")),
        ("num", "0.00", "FM0.99", W::Ok("0.")),
        ("num", "0", "FM.99", W::Ok(".##")),
        ("num", "0.5", "FM.99", W::Ok(".##")),
        ("i4", "0", "9V999999999999", W::Ok("             0")),
        ("i8", "-9223372036854775808", "9999999999999999999", W::Ok("-9223372036854775808")),
        ("i8", "-9223372036854775808", "9.99EEEE", W::Ok("-9.22e+18")),
        ("i8", "-9223372036854775808", "999999999999999999", W::Ok("-##################")),
        ("i4", "-2147483648", "RN", W::Ok("###############")),
        ("i4", "1994", "RN", W::Ok("        MCMXCIV")),
        ("i4", "1994", "FMrn", W::Ok("mcmxciv")),
        ("i4", "3888", "RN", W::Ok("MMMDCCCLXXXVIII")),
        ("i4", "4", "\"RN\"RN", W::Ok("RN             IV")),
        ("f8", "3999.49", "RN", W::Ok("      MMMCMXCIX")),
        ("f8", "3999.5", "RN", W::Ok("###############")),
        ("f4", "-0.4", "RN", W::Ok("###############")),
        ("num", "0.5", "RN", W::Ok("              I")),
        ("num", "-0.5", "RN", W::Ok("###############")),
        ("num", "2147483647.4", "RN", W::Ok("###############")),
        ("num", "2147483648", "RN", W::Err("22003", "integer out of range", "")),
        ("num", "-2147483648.4", "RN", W::Ok("###############")),
        ("num", "1", "9.99EEEE9", W::Err("42601", "\"EEEE\" must be the last pattern used", "")),
        ("num", "1", "9.99EEEETH", W::Err("42601", "\"EEEE\" must be the last pattern used", "")),
        ("num", "1", "TH9.99EEEE", W::Ok(" 1.00e+00")),
        ("num", "1", "RN9", W::Ok("              I")),
        ("num", "5", "9RN", W::Ok("              V")),
        ("num", "5", "FM9RN", W::Ok("V")),
        ("num", "5", "9.9RN", W::Ok("              V")),
        ("num", "-5", "S9RN", W::Ok("###############")),
        ("num", "-5", "PR9", W::Err("42601", "\"9\" must be ahead of \"PR\"", "")),
        ("num", "12", "99 \"€ä\"", W::Ok(" 12 €ä")),
        ("num", "12", "\"", W::Ok("")),
        ("num", "12", "9\"", W::Ok(" #")),
        ("num", "12", "\\", W::Ok("\\")),
        ("num", "12", "9\\", W::Ok(" #\\")),
        ("num", "12", "\"\\", W::Ok("\\")),
        ("num", "12", "\"\\\"", W::Ok("\"")),
        ("num", "12", "\\\\\"9", W::Ok("\\\" #")),
        ("tonum", "1€2", "9999", W::Ok("1")),
        ("tonum", "€12", "999", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "1ä2", "9x99", W::Ok("12")),
        ("tonum", "12ä", "99L9", W::Ok("12")),
        ("tonum", "ä12", "L99", W::Ok("12")),
        ("tonum", "12", "\"ä\"99", W::Ok("2")),
        ("tonum", "123", "9.9.9", W::Err("42601", "multiple decimal points", "")),
        ("tonum", "1", "9EEEE", W::Err("0A000", "\"EEEE\" not supported for input", "")),
        ("tonum", "-1", "S9S", W::Err("42601", "cannot use \"S\" twice", "")),
        ("tonum", "1-", "9MI", W::Ok("-1")),
        ("tonum", "1 -", "9 MI", W::Ok("-1")),
        ("tonum", "-1", "MI9", W::Ok("-1")),
        ("tonum", "- 1", "MI9", W::Ok("-1")),
        ("tonum", "+1", "PL9", W::Ok("1")),
        ("tonum", "1+", "9PL", W::Ok("1")),
        ("tonum", "1", "9th", W::Ok("1")),
        ("tonum", "1st", "99th", W::Ok("1")),
        ("tonum", "12st", "99TH", W::Ok("12")),
        ("tonum", "12", "9TH9", W::Ok("12")),
        ("tonum", "12.34", "99.99V9", W::Err("42601", "cannot use \"V\" and decimal point together", "")),
        ("tonum", "1,2,3,4", "9,9,9,9", W::Ok("1234")),
        ("tonum", "1234", "9,9,9,9", W::Ok("1234")),
        ("tonum", "1234", "FM9,9,9,9", W::Ok("1234")),
        ("tonum", "1,2,3,4", "FM9,9,9,9", W::Ok("12")),
        ("tonum", "1 2", "9G9", W::Ok("12")),
        ("tonum", "1,2", "9G9", W::Ok("12")),
        ("tonum", "<1.5>", "9.9PR", W::Ok("-1.5")),
        ("tonum", "<1.5", "9.9PR", W::Ok("-1.5")),
        ("tonum", "1.5>", "9.9PR", W::Ok("1.5")),
        ("tonum", "-", "S9", W::Err("22P02", "invalid input syntax for type numeric: \"-\"", "")),
        ("tonum", "1-", "9S", W::Ok("-1")),
        ("tonum", "1.-", "9.S", W::Ok("-1")),
        ("tonum", "1.5-", "9.9S", W::Ok("-1.5")),
        ("tonum", "1.5+", "9.9S", W::Ok("1.5")),
        ("tonum", "-1.5", "S9.9", W::Ok("-1.5")),
        ("tonum", "+.5", "S.9", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
        ("tonum", "-.", "S.9", W::Err("22P02", "invalid input syntax for type numeric: \" \"", "")),
    ];

    #[test]
    fn postgres_oracle_table() {
        let mut failures = Vec::new();
        for (kind, v, fmt, want) in CASES {
            let got = run(kind, v, fmt);
            let good = match (want, &got) {
                (W::Ok(w), Ok(g)) => w == g,
                (W::Err(code, msg, det), Err(e)) => {
                    e.code == *code && e.message == *msg && e.detail.as_deref().unwrap_or("") == *det && e.hint.is_none()
                }
                _ => false,
            };
            if !good {
                failures.push(format!("{kind} {v:?} {fmt:?}: got {got:?}"));
            }
        }
        assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
    }

    #[test]
    fn long_numerics_are_exact() {
        let digits = format!("1{}", "2".repeat(999));
        assert_eq!(to_char(NumValue::Numeric(&digits), &"9".repeat(1000)), Ok(format!(" {digits}")));
        let neg = format!("-{digits}");
        assert_eq!(to_char(NumValue::Numeric(&neg), &format!("FM{}", "9".repeat(1001))), Ok(neg.clone()));
        assert_eq!(to_char(NumValue::Numeric(&digits), &"9".repeat(999)), Ok(format!(" {}", "#".repeat(999))));
        // Rounding carries through every digit.
        let nines = format!("0.{}", "9".repeat(1000));
        assert_eq!(to_char(NumValue::Numeric(&nines), "9.99"), Ok(" 1.00".to_string()));
        let input = format!("1{}", "0".repeat(900));
        assert_eq!(to_number(&input, &"9".repeat(901)), Ok(input.clone()));
    }

    #[test]
    fn refusals_are_0a000() {
        // integer and bigint differ: to_char(125::int4, '9.9EEEE') is ' 1.2e+02', bigint gives ' 1.3e+02'.
        assert_eq!(to_char(NumValue::Int4(125), "9.9EEEE"), Ok(" 1.2e+02".to_string()));
        assert_eq!(to_char(NumValue::Int8(125), "9.9EEEE"), Ok(" 1.3e+02".to_string()));
        assert_eq!(to_char(NumValue::Int8(12_500_000_000), "9.9EEEE"), Ok(" 1.3e+10".to_string()));
        // to_number with an empty template is NULL in PostgreSQL.
        assert_eq!(to_number("12", "").map_err(|e| e.code), Err("0A000"));
        assert_eq!(to_char(NumValue::Int4(12), ""), Ok(String::new()));
        // PostgreSQL's own 0A000 errors keep PostgreSQL's wording.
        let e = to_number("XIV", "RN").expect_err("RN input");
        assert_eq!((e.code, e.message.as_str()), ("0A000", "\"RN\" not supported for input"));
    }
}

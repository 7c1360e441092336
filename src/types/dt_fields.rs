//! The field decoders of PostgreSQL 15's `datetime.c` used by [`super::dt_parse`]:
//! `DecodeDate`, `DecodeNumber`, `DecodeNumberField`, `DecodeTime`, `DecodeTimezone`,
//! `ValidateDate`, with the field masks they share and work-alikes of the C library
//! functions (`strtol`, `atoi`, `strtod`) whose exact behaviour they depend on.
//! DateStyle is `ISO, MDY`.

use super::datetime::{date2j, j2date, USECS_PER_DAY};
use super::dt_lex::MAX_FIELDS;
use super::dt_tokens::{keyword, Keyword};
use super::strtod::{scan, Format};
use super::util::is_space;

/// PostgreSQL's `DTERR_*` codes, mapped to messages by the caller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DtErr {
    BadFormat,
    FieldOverflow,
    /// Month or day out of range: like `FieldOverflow` plus a DateStyle hint.
    MdFieldOverflow,
    TzDispOverflow,
    /// A zone name PostgreSQL would look up in its database (not supported here).
    TzNotRecognized(String),
    /// An error already in PostgreSQL's words (its SQLSTATE and message): a zone heapstore
    /// cannot use, a time out of the zone's range.
    Refused(&'static str, String),
}

pub(crate) type DtResult<T> = Result<T, DtErr>;

/// Broken-down date and time (`struct pg_tm` plus `fsec`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tm {
    pub year: i32,
    pub mon: i32,
    pub mday: i32,
    pub hour: i32,
    pub min: i32,
    pub sec: i32,
    /// Microseconds.
    pub fsec: i32,
    /// Day of year, between `DecodeNumber` and `ValidateDate`.
    pub yday: i32,
    /// A zone given in the input: seconds east of UTC (a numeric offset, or UTC's names).
    pub tz: Option<i32>,
    /// A zone abbreviation with another offset (`EST`, `CEST`, ...): timestamp ignores it;
    /// timestamp with time zone refuses it (heapstore has no zone abbreviation table).
    pub tz_abbrev: bool,
}

// ---------------------------------------------------------------------------------------
// Field masks (`DTK_M(...)`), with PostgreSQL's bit numbers.

const fn m(bit: u32) -> u32 {
    1 << bit
}
pub(super) const RESERV: u32 = m(0);
pub(super) const MONTH: u32 = m(1);
pub(super) const YEAR: u32 = m(2);
pub(super) const DAY: u32 = m(3);
pub(super) const TZ: u32 = m(5);
pub(super) const DTZ: u32 = m(6);
pub(super) const DYNTZ: u32 = m(7);
pub(super) const AMPM: u32 = m(9);
pub(super) const HOUR: u32 = m(10);
pub(super) const MINUTE: u32 = m(11);
pub(super) const SECOND: u32 = m(12);
pub(super) const ALL_SECS: u32 = m(12) | m(13) | m(14);
pub(super) const DOY: u32 = m(15);
pub(super) const DOW: u32 = m(16);
pub(super) const ADBC: u32 = m(18);
pub(super) const DTZMOD: u32 = m(28);
pub(super) const DATE_M: u32 = YEAR | MONTH | DAY;
pub(super) const TIME_M: u32 = HOUR | MINUTE | ALL_SECS;

// ---------------------------------------------------------------------------------------
// DecodeDate, DecodeNumber, DecodeNumberField

/// `DecodeDate`: a field with embedded delimiters such as `2000-01-02`, `1/2/2000`,
/// `2000-jan-02`. Month names are taken first, then the numbers in order.
pub(super) fn decode_date(t: &[u8], mut fmask: u32, is2digits: &mut bool, tm: &mut Tm) -> DtResult<u32> {
    let (subs, n) = date_subfields(t)?;
    let subs = &subs[..n];
    let mut tmask = 0;
    let mut have_text_month = false;
    let mut numeric = [true; MAX_FIELDS];
    for (i, &(a, b)) in subs.iter().enumerate() {
        if !t[a].is_ascii_alphabetic() {
            continue;
        }
        match keyword(&t[a..b]) {
            // An ignored word is left for the numeric pass, which rejects it.
            Some(Keyword::Ignore) => continue,
            Some(Keyword::Month(v)) if fmask & MONTH == 0 => tm.mon = v,
            _ => return Err(DtErr::BadFormat),
        }
        have_text_month = true;
        numeric[i] = false;
        fmask |= MONTH;
        tmask |= MONTH;
    }
    // Fractional seconds cannot occur here; PostgreSQL discards them too.
    let mut fsec = 0;
    for (&(a, b), _) in subs.iter().zip(numeric).filter(|(_, num)| *num) {
        let ctx = NumberCtx { have_text_month, fmask };
        let dmask = decode_number(&t[a..b], ctx, tm, &mut fsec, is2digits)?;
        if fmask & dmask != 0 {
            return Err(DtErr::BadFormat);
        }
        fmask |= dmask;
        tmask |= dmask;
    }
    if fmask & !(DOY | TZ) != DATE_M {
        return Err(DtErr::BadFormat);
    }
    Ok(tmask)
}

/// Splits a date field into its runs of digits or letters (at most `MAXDATEFIELDS`). Like
/// PostgreSQL, the character after each run is consumed as its terminator even when it is
/// alphanumeric (`jan01` gives `jan` and `1`).
fn date_subfields(t: &[u8]) -> DtResult<([(usize, usize); MAX_FIELDS], usize)> {
    let mut subs = [(0, 0); MAX_FIELDS];
    let mut n = 0;
    let mut pos = 0;
    while pos < t.len() && n < MAX_FIELDS {
        pos += t[pos..].iter().take_while(|c| !c.is_ascii_alphanumeric()).count();
        if pos >= t.len() {
            return Err(DtErr::BadFormat);
        }
        let digits = t[pos].is_ascii_digit();
        let run = t[pos..].iter().take_while(|c| if digits { c.is_ascii_digit() } else { c.is_ascii_alphabetic() }).count();
        subs[n] = (pos, pos + run);
        n += 1;
        pos = (pos + run + 1).min(t.len());
    }
    Ok((subs, n))
}

#[derive(Clone, Copy)]
pub(super) struct NumberCtx {
    pub(super) have_text_month: bool,
    pub(super) fmask: u32,
}

/// `DecodeNumber`: a plain number interpreted by what has been seen so far (DateStyle MDY).
pub(super) fn decode_number(t: &[u8], ctx: NumberCtx, tm: &mut Tm, fsec: &mut i32, is2digits: &mut bool) -> DtResult<u32> {
    let n = strtol(t);
    if n.overflow || i32::try_from(n.value).is_err() {
        return Err(DtErr::FieldOverflow);
    }
    if n.end == 0 {
        return Err(DtErr::BadFormat);
    }
    let val = n.value as i32;
    let rest = &t[n.end..];
    if rest.first() == Some(&b'.') {
        if n.end > 2 {
            // 2001.360, 20011225, 040506.789: a run-together date or time.
            return decode_number_field(t, ctx.fmask | DATE_M, tm, fsec, is2digits);
        }
        *fsec = parse_fractional_second(rest)?;
    } else if !rest.is_empty() {
        return Err(DtErr::BadFormat);
    }
    let flen = t.len();
    if flen == 3 && ctx.fmask & DATE_M == YEAR && (1..=366).contains(&val) {
        tm.yday = val;
        return Ok(DOY | MONTH | DAY);
    }
    if ctx.fmask & DATE_M == DATE_M {
        // The date is complete, so this must be a time.
        return decode_number_field(t, ctx.fmask, tm, fsec, is2digits);
    }
    let tmask = number_role(ctx, flen)?;
    match tmask {
        YEAR => {
            tm.year = val;
            *is2digits = flen <= 2;
        }
        MONTH => tm.mon = val,
        _ if ctx.fmask & DATE_M == YEAR | MONTH && ctx.have_text_month && flen >= 3 && *is2digits => {
            // DD-MON-YYYY: the "year" seen first was really the day.
            tm.mday = tm.year;
            tm.year = val;
            *is2digits = false;
        }
        _ => tm.mday = val,
    }
    Ok(tmask)
}

/// Which date field a plain number of `flen` digits fills, given the fields already seen.
fn number_role(ctx: NumberCtx, flen: usize) -> DtResult<u32> {
    Ok(match ctx.fmask & DATE_M {
        0 if flen >= 3 => YEAR,
        0 => MONTH,
        YEAR => MONTH,
        MONTH if ctx.have_text_month && flen >= 3 => YEAR,
        MONTH => DAY,
        x if x == YEAR | MONTH => DAY,
        DAY => MONTH,
        x if x == MONTH | DAY => YEAR,
        _ => return Err(DtErr::BadFormat),
    })
}

/// `DecodeNumberField`: run-together `yyyymmdd`, `yymmdd`, `hhmmss`, `hhmm`, optionally
/// with fractional seconds.
pub(super) fn decode_number_field(t: &[u8], fmask: u32, tm: &mut Tm, fsec: &mut i32, is2digits: &mut bool) -> DtResult<u32> {
    let dot = t.iter().position(|&c| c == b'.');
    let digits = &t[..dot.unwrap_or(t.len())];
    let len = digits.len();
    if let Some(d) = dot {
        let frac = &t[d..];
        *fsec = if frac.len() == 1 {
            0
        } else {
            let r = scan(frac, Format::F64);
            let v = r.map_or(0.0, |r| f64::from_bits(r.bits));
            if r.is_some_and(|r| r.out_of_range || is_subnormal(v)) {
                return Err(DtErr::BadFormat);
            }
            (v * 1_000_000.0).round_ties_even() as i32
        };
    } else if fmask & DATE_M != DATE_M && len >= 6 {
        tm.mday = atoi(&digits[len - 2..]);
        tm.mon = atoi(&digits[len - 4..len - 2]);
        tm.year = atoi(&digits[..len - 4]);
        if len - 4 == 2 {
            *is2digits = true;
        }
        return Ok(DATE_M);
    }
    if fmask & TIME_M != TIME_M && (len == 6 || len == 4) {
        tm.hour = atoi(&digits[..2]);
        tm.min = atoi(&digits[2..4]);
        tm.sec = if len == 6 { atoi(&digits[4..]) } else { 0 };
        return Ok(TIME_M);
    }
    Err(DtErr::BadFormat)
}

// ---------------------------------------------------------------------------------------
// DecodeTime, DecodeTimezone, ValidateDate

/// `DecodeTimeCommon`: `hh:mm`, `hh:mm:ss[.fff]`, or `mm:ss.fff`, as (hour, minute, second,
/// microsecond), each checked but the hour's upper bound (the caller's: a time of day's or an
/// interval's).
pub(super) fn decode_time_common(t: &[u8]) -> DtResult<(i64, i64, i64, i64)> {
    let h = strtol(t);
    if h.overflow {
        return Err(DtErr::FieldOverflow);
    }
    let rest = &t[h.end..];
    if rest.first() != Some(&b':') {
        return Err(DtErr::BadFormat);
    }
    let m = strtoint(&rest[1..])?;
    let rest = &rest[1 + m.end..];
    let (mut hour, mut min, mut sec, mut fsec) = (h.value, m.value, 0i64, 0i32);
    match rest.first() {
        None => {}
        Some(b'.') => {
            fsec = parse_fractional_second(rest)?;
            if i32::try_from(hour).is_err() {
                return Err(DtErr::FieldOverflow);
            }
            sec = min;
            min = hour;
            hour = 0;
        }
        Some(b':') => {
            let s = strtoint(&rest[1..])?;
            sec = s.value;
            let rest = &rest[1 + s.end..];
            match rest.first() {
                Some(b'.') => fsec = parse_fractional_second(rest)?,
                Some(_) => return Err(DtErr::BadFormat),
                None => {}
            }
        }
        Some(_) => return Err(DtErr::BadFormat),
    }
    if hour < 0 || !(0..=59).contains(&min) || !(0..=60).contains(&sec) || !(0..=1_000_000).contains(&fsec) {
        return Err(DtErr::FieldOverflow);
    }
    Ok((hour, min, sec, i64::from(fsec)))
}

/// `DecodeTime`: a time of day's fields (the hour within int32).
pub(super) fn decode_time(t: &[u8], tm: &mut Tm) -> DtResult<()> {
    let (hour, min, sec, fsec) = decode_time_common(t)?;
    if hour > i64::from(i32::MAX) {
        return Err(DtErr::FieldOverflow);
    }
    tm.hour = hour as i32;
    tm.min = min as i32;
    tm.sec = sec as i32;
    tm.fsec = fsec as i32;
    Ok(())
}

/// `time_overflows`: fields in range and the total at most 24:00:00.
pub(super) fn time_overflows(tm: &Tm) -> bool {
    if !(0..=24).contains(&tm.hour) || !(0..60).contains(&tm.min) || !(0..=60).contains(&tm.sec) || !(0..=1_000_000).contains(&tm.fsec) {
        return true;
    }
    let total = ((i64::from(tm.hour) * 60 + i64::from(tm.min)) * 60 + i64::from(tm.sec)) * 1_000_000 + i64::from(tm.fsec);
    total > USECS_PER_DAY
}

/// `DecodeTimezone`: `+hh`, `+hhmm`, `+hh:mm[:ss]` within +/-15:59:59.
/// `DecodeTimezone`: `+hh`, `-hh:mm`, `+hhmm`, `-hh:mm:ss`; returns seconds east of UTC.
pub(super) fn decode_timezone(t: &[u8]) -> DtResult<i32> {
    if !matches!(t.first(), Some(b'+' | b'-')) {
        return Err(DtErr::BadFormat);
    }
    let tz_err = |_| DtErr::TzDispOverflow;
    let h = strtoint(&t[1..]).map_err(tz_err)?;
    let mut rest = &t[1 + h.end..];
    let (mut hr, mut min, mut sec) = (h.value, 0, 0);
    if rest.first() == Some(&b':') {
        let m = strtoint(&rest[1..]).map_err(tz_err)?;
        min = m.value;
        rest = &rest[1 + m.end..];
        if rest.first() == Some(&b':') {
            let s = strtoint(&rest[1..]).map_err(tz_err)?;
            sec = s.value;
            rest = &rest[1 + s.end..];
        }
    } else if rest.is_empty() && t.len() > 3 {
        min = hr % 100;
        hr /= 100;
    }
    if !(0..=15).contains(&hr) || !(0..60).contains(&min) || !(0..60).contains(&sec) {
        return Err(DtErr::TzDispOverflow);
    }
    if !rest.is_empty() {
        return Err(DtErr::BadFormat);
    }
    let east = ((hr * 60 + min) * 60 + sec) as i32;
    Ok(if t[0] == b'-' { -east } else { east })
}

/// `ValidateDate`: BC and two-digit years, day of year, month and day ranges.
pub(super) fn validate_date(fmask: u32, isjulian: bool, is2digits: bool, bc: bool, tm: &mut Tm) -> DtResult<()> {
    if fmask & YEAR != 0 && !isjulian {
        if bc {
            if tm.year <= 0 {
                return Err(DtErr::FieldOverflow);
            }
            tm.year = -(tm.year - 1);
        } else if is2digits {
            if tm.year < 0 {
                return Err(DtErr::FieldOverflow);
            }
            if tm.year < 70 {
                tm.year += 2000;
            } else if tm.year < 100 {
                tm.year += 1900;
            }
        } else if tm.year <= 0 {
            return Err(DtErr::FieldOverflow);
        }
    }
    if fmask & DOY != 0 {
        let jd = date2j(tm.year, 1, 1) + i64::from(tm.yday) - 1;
        (tm.year, tm.mon, tm.mday) = j2date(jd as i32);
    }
    if fmask & MONTH != 0 && !(1..=12).contains(&tm.mon) {
        return Err(DtErr::MdFieldOverflow);
    }
    if fmask & DAY != 0 && !(1..=31).contains(&tm.mday) {
        return Err(DtErr::MdFieldOverflow);
    }
    if fmask & DATE_M == DATE_M && tm.mday > days_in_month(tm.year, tm.mon) {
        return Err(DtErr::FieldOverflow);
    }
    Ok(())
}

pub(crate) fn is_leap(y: i32) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

/// `day_tab[isleap(year)][mon - 1]` for a month in 1..=12.
pub(crate) fn days_in_month(year: i32, mon: i32) -> i32 {
    const DAYS: [i32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let d = DAYS[(mon.clamp(1, 12) - 1) as usize];
    if mon == 2 && is_leap(year) {
        d + 1
    } else {
        d
    }
}

// ---------------------------------------------------------------------------------------
// C library work-alikes

/// Result of `strtol`: value (saturated on overflow), bytes consumed (0 when no digits).
pub(super) struct Long {
    pub(super) value: i64,
    pub(super) end: usize,
    pub(super) overflow: bool,
}

/// `strtol(s, &end, 10)`: leading whitespace, optional sign, digits.
pub(super) fn strtol(s: &[u8]) -> Long {
    let mut i = s.iter().take_while(|&&c| is_space(c)).count();
    let neg = super::util::take_sign(s, &mut i);
    let digits = s[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return Long { value: 0, end: 0, overflow: false };
    }
    let mut value: i64 = 0;
    let mut overflow = false;
    for &c in &s[i..i + digits] {
        let d = i64::from(c - b'0');
        match value.checked_mul(10).and_then(|v| if neg { v.checked_sub(d) } else { v.checked_add(d) }) {
            Some(v) => value = v,
            None => {
                overflow = true;
                value = if neg { i64::MIN } else { i64::MAX };
            }
        }
    }
    Long { value, end: i + digits, overflow }
}

/// PostgreSQL's `strtoint`: `strtol` that must also fit in 32 bits.
pub(super) fn strtoint(s: &[u8]) -> Result<Long, DtErr> {
    let n = strtol(s);
    if n.overflow || i32::try_from(n.value).is_err() {
        return Err(DtErr::FieldOverflow);
    }
    Ok(n)
}

/// glibc `atoi`: `(int) strtol(s, NULL, 10)`, truncating to 32 bits.
pub(super) fn atoi(s: &[u8]) -> i32 {
    strtol(s).value as i32
}

/// `strtod` that must consume all of `s` without `ERANGE`.
pub(super) fn strtod_all(s: &[u8]) -> Option<f64> {
    let r = scan(s, Format::F64)?;
    let v = f64::from_bits(r.bits);
    (r.len == s.len() && !r.out_of_range && !is_subnormal(v)).then_some(v)
}

/// glibc reports `ERANGE` for (inexact) subnormal results as well.
pub(super) fn is_subnormal(v: f64) -> bool {
    v != 0.0 && v.abs() < f64::MIN_POSITIVE
}

/// `ParseFraction`: `.` alone is zero; otherwise the whole rest must be a number.
pub(super) fn parse_fraction(s: &[u8]) -> DtResult<f64> {
    if s.len() == 1 {
        return Ok(0.0);
    }
    strtod_all(s).ok_or(DtErr::BadFormat)
}

/// `ParseFractionalSecond`: the fraction in microseconds, `rint` rounding.
pub(super) fn parse_fractional_second(s: &[u8]) -> DtResult<i32> {
    Ok((parse_fraction(s)? * 1_000_000.0).round_ties_even() as i32)
}

//! `interval`: months, days and microseconds, kept apart as PostgreSQL keeps them (a month
//! is not a fixed number of days, nor a day a fixed number of hours, until an operation says
//! so).
//!
//! - **Storage** (16 bytes, little-endian): microseconds (i64), days (i32), months (i32). The
//!   binary form is PostgreSQL's `interval_send`: the same three, big-endian, in that order.
//! - **Input** is PostgreSQL 15's `interval_in`: `ParseDateTime` (`dt_lex`), then
//!   `DecodeInterval` read right to left (units before their numbers: `1 day 2 hours`,
//!   `1-2` years-months, `04:05:06`, `+02:03`, `@ ... ago`, fractional units cascading down:
//!   `1.5 months` is 1 month 15 days), and on a format error ISO 8601 (`P1Y2M3DT4H5M6S`, the
//!   alternative forms `P0001-02-03T04:05:06` and `P00010203T040506`). Errors are 22007
//!   `invalid input syntax for type interval` and 22015 `interval field value out of range`;
//!   22008 `interval out of range` when the months do not fit.
//! - **Output** is IntervalStyle `postgres` (the only style heapstore has):
//!   `1 year 2 mons 3 days 04:05:06.5`, `-1 days +02:03:00`, `00:00:00`.
//! - **Comparison** is PostgreSQL's `interval_cmp_value`: a month counts 30 days and a day 24
//!   hours, so `'1 mon' = '30 days'`; hashing and B-tree keys use the same 128-bit span.
//! - **Arithmetic** follows `timestamp.c`: field-wise sums, multiplication and division
//!   cascading fractions down, timestamp plus interval (months with end-of-month clamping,
//!   then days, then time), timestamp minus timestamp (justified hours), `age`,
//!   `justify_days` / `justify_hours` / `justify_interval`, and the fields EXTRACT reads.

use super::datetime::{self, USECS_PER_DAY, USECS_PER_HOUR, USECS_PER_MINUTE, USECS_PER_SEC};
use super::dt_fields::{days_in_month, decode_time_common, parse_fraction, strtol, DtErr, DtResult, Tm};
use super::dt_lex::{Fields, Kind, INTERVAL_WORKBUF};
use super::strtod::{scan, Format};
use crate::error::{PgError, Result};

const DAYS_PER_MONTH: i32 = 30;
const MONTHS_PER_YEAR: i32 = 12;
const SECS_PER_DAY: f64 = 86_400.0;

/// Bytes of a stored interval.
pub const INTERVAL_LEN: usize = 16;

/// An interval value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Interval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

pub(crate) fn out_of_range() -> PgError {
    PgError::new("22008", "interval out of range")
}

fn timestamp_out_of_range() -> PgError {
    PgError::new("22008", "timestamp out of range")
}

impl Interval {
    pub fn decode(v: &[u8]) -> Interval {
        let mut b = [0u8; INTERVAL_LEN];
        let n = v.len().min(INTERVAL_LEN);
        b[..n].copy_from_slice(&v[..n]);
        Interval {
            micros: i64::from_le_bytes(b[0..8].try_into().expect("8 bytes")),
            days: i32::from_le_bytes(b[8..12].try_into().expect("4 bytes")),
            months: i32::from_le_bytes(b[12..16].try_into().expect("4 bytes")),
        }
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.micros.to_le_bytes());
        out.extend_from_slice(&self.days.to_le_bytes());
        out.extend_from_slice(&self.months.to_le_bytes());
    }

    /// `interval_send`.
    pub fn send(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.micros.to_be_bytes());
        out.extend_from_slice(&self.days.to_be_bytes());
        out.extend_from_slice(&self.months.to_be_bytes());
    }

    /// `interval_recv` (exactly 16 bytes).
    pub fn recv(wire: &[u8]) -> Result<Interval> {
        let b: [u8; INTERVAL_LEN] = super::util::wire_exact(wire)?;
        Ok(Interval {
            micros: i64::from_be_bytes(b[0..8].try_into().expect("8 bytes")),
            days: i32::from_be_bytes(b[8..12].try_into().expect("4 bytes")),
            months: i32::from_be_bytes(b[12..16].try_into().expect("4 bytes")),
        })
    }

    /// `interval_cmp_value`: the span in microseconds with 30-day months and 24-hour days.
    pub fn span(&self) -> i128 {
        let days = i64::from(self.months) * 30 + i64::from(self.days);
        i128::from(self.micros) + i128::from(days) * i128::from(USECS_PER_DAY)
    }

    /// `interval_um`.
    pub fn neg(&self) -> Result<Interval> {
        Ok(Interval {
            months: self.months.checked_neg().ok_or_else(out_of_range)?,
            days: self.days.checked_neg().ok_or_else(out_of_range)?,
            micros: self.micros.checked_neg().ok_or_else(out_of_range)?,
        })
    }

    /// `interval_pl`.
    pub fn add(&self, o: &Interval) -> Result<Interval> {
        Ok(Interval {
            months: self.months.checked_add(o.months).ok_or_else(out_of_range)?,
            days: self.days.checked_add(o.days).ok_or_else(out_of_range)?,
            micros: self.micros.checked_add(o.micros).ok_or_else(out_of_range)?,
        })
    }

    /// `interval_mi`.
    pub fn sub(&self, o: &Interval) -> Result<Interval> {
        Ok(Interval {
            months: self.months.checked_sub(o.months).ok_or_else(out_of_range)?,
            days: self.days.checked_sub(o.days).ok_or_else(out_of_range)?,
            micros: self.micros.checked_sub(o.micros).ok_or_else(out_of_range)?,
        })
    }

    /// `interval_mul`: whole months and days scale; their fractions cascade down to days and
    /// seconds (never up).
    pub fn mul(&self, factor: f64) -> Result<Interval> {
        let m = f64::from(self.months) * factor;
        if m.is_nan() || m > f64::from(i32::MAX) || m < f64::from(i32::MIN) {
            return Err(out_of_range());
        }
        let d = f64::from(self.days) * factor;
        if d.is_nan() || d > f64::from(i32::MAX) || d < f64::from(i32::MIN) {
            return Err(out_of_range());
        }
        self.cascade(m as i32, d as i32, f64::from(self.months) * factor, f64::from(self.days) * factor, self.micros as f64 * factor)
    }

    /// `interval_div`.
    pub fn div(&self, factor: f64) -> Result<Interval> {
        if factor == 0.0 {
            return Err(PgError::new("22012", "division by zero"));
        }
        let m = f64::from(self.months) / factor;
        let d = f64::from(self.days) / factor;
        if m.is_nan()
            || m > f64::from(i32::MAX)
            || m < f64::from(i32::MIN)
            || d.is_nan()
            || d > f64::from(i32::MAX)
            || d < f64::from(i32::MIN)
        {
            return Err(out_of_range());
        }
        self.cascade(m as i32, d as i32, m, d, self.micros as f64 / factor)
    }

    /// The common tail of `interval_mul` / `interval_div`.
    fn cascade(&self, months: i32, days: i32, exact_months: f64, exact_days: f64, time: f64) -> Result<Interval> {
        let tsround = |x: f64| (x * 1_000_000.0).round_ties_even() / 1_000_000.0;
        let mut days = days;
        let month_remainder_days = tsround((exact_months - f64::from(months)) * f64::from(DAYS_PER_MONTH));
        let mut sec_remainder =
            tsround((exact_days - f64::from(days) + month_remainder_days - f64::from(month_remainder_days as i32)) * SECS_PER_DAY);
        if sec_remainder.abs() >= SECS_PER_DAY {
            let whole = (sec_remainder / SECS_PER_DAY) as i32;
            days = days.checked_add(whole).ok_or_else(out_of_range)?;
            sec_remainder -= f64::from(whole) * SECS_PER_DAY;
        }
        days = days.checked_add(month_remainder_days as i32).ok_or_else(out_of_range)?;
        let t = (time + sec_remainder * USECS_PER_SEC as f64).round_ties_even();
        if t.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&t) {
            return Err(out_of_range());
        }
        Ok(Interval { months, days, micros: t as i64 })
    }

    /// `interval_justify_hours`: whole days out of the time.
    pub fn justify_hours(&self) -> Result<Interval> {
        let mut r = *self;
        let whole = r.micros / USECS_PER_DAY;
        r.micros -= whole * USECS_PER_DAY;
        r.days = i32::try_from(i64::from(r.days) + whole).map_err(|_| out_of_range())?;
        r.days_time_same_sign();
        Ok(r)
    }

    /// Days and time of one sign (`justify_hours`' last step).
    fn days_time_same_sign(&mut self) {
        if self.days > 0 && self.micros < 0 {
            self.micros += USECS_PER_DAY;
            self.days -= 1;
        } else if self.days < 0 && self.micros > 0 {
            self.micros -= USECS_PER_DAY;
            self.days += 1;
        }
    }

    /// Whole 30-day months out of the days (`justify_days`' first step).
    fn days_to_months(&mut self) -> Result<()> {
        let whole = self.days / DAYS_PER_MONTH;
        self.days -= whole * DAYS_PER_MONTH;
        self.months = self.months.checked_add(whole).ok_or_else(out_of_range)?;
        Ok(())
    }

    /// `interval_justify_days`: whole 30-day months out of the days.
    pub fn justify_days(&self) -> Result<Interval> {
        let mut r = *self;
        r.days_to_months()?;
        if r.months > 0 && r.days < 0 {
            r.days += DAYS_PER_MONTH;
            r.months -= 1;
        } else if r.months < 0 && r.days > 0 {
            r.days -= DAYS_PER_MONTH;
            r.months += 1;
        }
        Ok(r)
    }

    /// `interval_justify_interval`.
    pub fn justify_interval(&self) -> Result<Interval> {
        let mut r = *self;
        if (r.days > 0 && r.micros > 0) || (r.days < 0 && r.micros < 0) {
            r.days_to_months()?;
        }
        let whole_day = r.micros / USECS_PER_DAY;
        r.micros -= whole_day * USECS_PER_DAY;
        r.days = i32::try_from(i64::from(r.days) + whole_day).map_err(|_| out_of_range())?;
        r.days_to_months()?;
        if r.months > 0 && (r.days < 0 || (r.days == 0 && r.micros < 0)) {
            r.days += DAYS_PER_MONTH;
            r.months -= 1;
        } else if r.months < 0 && (r.days > 0 || (r.days == 0 && r.micros > 0)) {
            r.days -= DAYS_PER_MONTH;
            r.months += 1;
        }
        r.days_time_same_sign();
        Ok(r)
    }

    /// `interval2itm`: (years, months, days, hours, minutes, seconds, microseconds), each
    /// truncated toward zero, so all carry the sign of their field.
    pub fn fields(&self) -> (i32, i32, i32, i64, i64, i64, i64) {
        let (hour, min, sec, usec) = datetime::split_time(self.micros);
        (self.months / MONTHS_PER_YEAR, self.months % MONTHS_PER_YEAR, self.days, hour, min, sec, usec)
    }

    /// `EncodeInterval` with IntervalStyle `postgres`.
    pub fn write_text(&self, out: &mut Vec<u8>) {
        let (year, mon, mday, hour, min, sec, usec) = self.fields();
        let mut is_zero = true;
        let mut is_before = false;
        let mut part = |out: &mut Vec<u8>, value: i64, unit: &str| {
            if value == 0 {
                return;
            }
            if !is_zero {
                out.push(b' ');
            }
            if is_before && value > 0 {
                out.push(b'+');
            }
            out.extend_from_slice(value.to_string().as_bytes());
            out.push(b' ');
            out.extend_from_slice(unit.as_bytes());
            if value != 1 {
                out.push(b's');
            }
            is_before = value < 0;
            is_zero = false;
        };
        part(out, year.into(), "year");
        part(out, mon.into(), "mon");
        part(out, mday.into(), "day");
        if is_zero || hour != 0 || min != 0 || sec != 0 || usec != 0 {
            let minus = hour < 0 || min < 0 || sec < 0 || usec < 0;
            if !is_zero {
                out.push(b' ');
            }
            if minus {
                out.push(b'-');
            } else if is_before {
                out.push(b'+');
            }
            let h = hour.unsigned_abs();
            if h < 10 {
                out.push(b'0');
            }
            out.extend_from_slice(h.to_string().as_bytes());
            out.push(b':');
            push2(out, min.unsigned_abs());
            out.push(b':');
            push2(out, sec.unsigned_abs());
            if usec != 0 {
                let mut frac = format!("{:06}", usec.unsigned_abs());
                while frac.ends_with('0') {
                    frac.pop();
                }
                out.push(b'.');
                out.extend_from_slice(frac.as_bytes());
            }
        }
    }

    pub fn to_text(&self) -> String {
        let mut out = Vec::new();
        self.write_text(&mut out);
        String::from_utf8(out).expect("ASCII")
    }
}

fn push2(out: &mut Vec<u8>, v: u64) {
    if v < 10 {
        out.push(b'0');
    }
    out.extend_from_slice(v.to_string().as_bytes());
}

// ---------------------------------------------------------------------------------------
// Input

/// `struct pg_itm_in`.
#[derive(Default)]
struct ItmIn {
    usec: i64,
    mday: i32,
    mon: i32,
    year: i32,
}

impl ItmIn {
    fn to_interval(&self) -> Option<Interval> {
        let months = i64::from(self.year) * i64::from(MONTHS_PER_YEAR) + i64::from(self.mon);
        Some(Interval { months: i32::try_from(months).ok()?, days: self.mday, micros: self.usec })
    }

    fn add_usec(&mut self, val: i64, scale: i64) -> bool {
        val.checked_mul(scale).and_then(|p| self.usec.checked_add(p)).map(|v| self.usec = v).is_some()
    }

    /// `AdjustFractMicroseconds`.
    fn fract_usec(&mut self, frac: f64, scale: i64) -> bool {
        if frac == 0.0 {
            return true;
        }
        let f = frac * scale as f64;
        let mut usec = f as i64;
        let rest = f - usec as f64;
        if rest > 0.5 {
            usec += 1;
        } else if rest < -0.5 {
            usec -= 1;
        }
        self.usec.checked_add(usec).map(|v| self.usec = v).is_some()
    }

    /// `AdjustFractDays`.
    fn fract_days(&mut self, frac: f64, scale: i32) -> bool {
        if frac == 0.0 {
            return true;
        }
        let f = frac * f64::from(scale);
        let extra = f as i32;
        match self.mday.checked_add(extra) {
            Some(d) => self.mday = d,
            None => return false,
        }
        self.fract_usec(f - f64::from(extra), USECS_PER_DAY)
    }

    /// `AdjustFractYears`.
    fn fract_years(&mut self, frac: f64, scale: i32) -> bool {
        // rint, as PostgreSQL 14 and later round (0.3 years is 4 months).
        let extra = (frac * f64::from(scale) * f64::from(MONTHS_PER_YEAR)).round_ties_even() as i32;
        self.mon.checked_add(extra).map(|v| self.mon = v).is_some()
    }

    /// `AdjustMicroseconds`.
    fn micros(&mut self, val: i64, fval: f64, scale: i64) -> bool {
        self.add_usec(val, scale) && self.fract_usec(fval, scale)
    }

    /// `AdjustDays`.
    fn days(&mut self, val: i64, scale: i32) -> bool {
        let Ok(v) = i32::try_from(val) else { return false };
        v.checked_mul(scale).and_then(|d| self.mday.checked_add(d)).map(|d| self.mday = d).is_some()
    }

    /// `AdjustMonths`.
    fn months(&mut self, val: i64) -> bool {
        let Ok(v) = i32::try_from(val) else { return false };
        self.mon.checked_add(v).map(|m| self.mon = m).is_some()
    }

    /// `AdjustYears`.
    fn years(&mut self, val: i64, scale: i32) -> bool {
        let Ok(v) = i32::try_from(val) else { return false };
        v.checked_mul(scale).and_then(|y| self.year.checked_add(y)).map(|y| self.year = y).is_some()
    }
}

/// The units `DecodeUnits` knows for intervals (`deltatktbl`); tokens compare on their first
/// 10 characters (`TOKMAXLEN`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Unit {
    Microsec,
    Millisec,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
    Tz,
    /// What `ago` leaves behind (see `decode_interval`).
    Nothing,
}

enum Token {
    Ignore,
    Ago,
    Units(Unit),
}

fn decode_units(word: &[u8]) -> Option<Token> {
    use Unit::*;
    const TABLE: &[(&str, Option<Unit>)] = &[
        ("@", None),
        ("c", Some(Century)),
        ("cent", Some(Century)),
        ("centuries", Some(Century)),
        ("century", Some(Century)),
        ("d", Some(Day)),
        ("day", Some(Day)),
        ("days", Some(Day)),
        ("dec", Some(Decade)),
        ("decade", Some(Decade)),
        ("decades", Some(Decade)),
        ("decs", Some(Decade)),
        ("h", Some(Hour)),
        ("hour", Some(Hour)),
        ("hours", Some(Hour)),
        ("hr", Some(Hour)),
        ("hrs", Some(Hour)),
        ("m", Some(Minute)),
        ("microsecon", Some(Microsec)),
        ("mil", Some(Millennium)),
        ("millennia", Some(Millennium)),
        ("millennium", Some(Millennium)),
        ("millisecon", Some(Millisec)),
        ("mils", Some(Millennium)),
        ("min", Some(Minute)),
        ("mins", Some(Minute)),
        ("minute", Some(Minute)),
        ("minutes", Some(Minute)),
        ("mon", Some(Month)),
        ("mons", Some(Month)),
        ("month", Some(Month)),
        ("months", Some(Month)),
        ("ms", Some(Millisec)),
        ("msec", Some(Millisec)),
        ("msecond", Some(Millisec)),
        ("mseconds", Some(Millisec)),
        ("msecs", Some(Millisec)),
        ("qtr", Some(Quarter)),
        ("quarter", Some(Quarter)),
        ("s", Some(Second)),
        ("sec", Some(Second)),
        ("second", Some(Second)),
        ("seconds", Some(Second)),
        ("secs", Some(Second)),
        ("timezone", Some(Tz)),
        ("timezone_h", Some(Tz)),
        ("timezone_m", Some(Tz)),
        ("us", Some(Microsec)),
        ("usec", Some(Microsec)),
        ("usecond", Some(Microsec)),
        ("useconds", Some(Microsec)),
        ("usecs", Some(Microsec)),
        ("w", Some(Week)),
        ("week", Some(Week)),
        ("weeks", Some(Week)),
        ("y", Some(Year)),
        ("year", Some(Year)),
        ("years", Some(Year)),
        ("yr", Some(Year)),
        ("yrs", Some(Year)),
    ];
    let key = &word[..word.len().min(10)];
    if key == b"ago" {
        return Some(Token::Ago);
    }
    TABLE.iter().find(|(t, _)| t.as_bytes() == key).map(|(_, u)| match u {
        None => Token::Ignore,
        Some(u) => Token::Units(*u),
    })
}

// The field masks of datetime.h (`DTK_M`).
const M_DAY: u32 = 1 << 3;
const M_HOUR: u32 = 1 << 10;
const M_MINUTE: u32 = 1 << 11;
const M_SECOND: u32 = 1 << 12;
const M_MILLISECOND: u32 = 1 << 13;
const M_MICROSECOND: u32 = 1 << 14;
const M_MONTH: u32 = 1 << 1;
const M_YEAR: u32 = 1 << 2;
const M_WEEK: u32 = 1 << 24;
const M_DECADE: u32 = 1 << 25;
const M_CENTURY: u32 = 1 << 26;
const M_MILLENNIUM: u32 = 1 << 27;
const M_ALL_SECS: u32 = M_SECOND | M_MILLISECOND | M_MICROSECOND;
const M_TIME: u32 = M_HOUR | M_MINUTE | M_ALL_SECS;

/// `DecodeTimeForInterval` (no type modifier: `hh:mm[:ss[.f]]`, `mm:ss.f`): the time
/// replaces the microseconds gathered so far, as in PostgreSQL.
fn decode_time(t: &[u8], itm: &mut ItmIn) -> DtResult<()> {
    let (hour, min, sec, fsec) = decode_time_common(t)?;
    itm.usec = fsec;
    if !itm.add_usec(hour, USECS_PER_HOUR) || !itm.add_usec(min, USECS_PER_MINUTE) || !itm.add_usec(sec, USECS_PER_SEC) {
        return Err(DtErr::FieldOverflow);
    }
    Ok(())
}

/// `DecodeInterval` without a type modifier, IntervalStyle `postgres`.
fn decode_interval(f: &Fields) -> DtResult<ItmIn> {
    let mut itm = ItmIn::default();
    let mut fmask: u32 = 0;
    let mut is_before = false;
    // The unit the next number (to the left) takes; None: not known yet (seconds).
    let mut unit: Option<Unit> = None;
    for i in (0..f.count).rev() {
        let t = f.text(i);
        let tmask: u32;
        let kind = f.kind(i);
        match kind {
            Kind::Time => {
                decode_time(t, &mut itm)?;
                tmask = M_TIME;
                unit = Some(Unit::Day);
            }
            Kind::Tz | Kind::Date | Kind::Number => {
                if kind == Kind::Tz && t[1..].contains(&b':') {
                    let mut tmp = ItmIn::default();
                    if decode_time(&t[1..], &mut tmp).is_ok() {
                        let mut usec = tmp.usec;
                        if t[0] == b'-' {
                            usec = usec.checked_neg().ok_or(DtErr::FieldOverflow)?;
                        }
                        itm.usec = usec;
                        tmask = M_TIME;
                        if tmask & fmask != 0 {
                            return Err(DtErr::BadFormat);
                        }
                        fmask |= tmask;
                        unit = Some(Unit::Day);
                        continue;
                    }
                }
                let u = unit.unwrap_or(Unit::Second);
                let n = strtol(t);
                if n.overflow {
                    return Err(DtErr::FieldOverflow);
                }
                let mut val = n.value;
                let cp = n.end;
                let mut u = u;
                let fval: f64;
                match t.get(cp) {
                    Some(b'-') => {
                        // SQL "years-months".
                        let m = strtol(&t[cp + 1..]);
                        if m.overflow || i32::try_from(m.value).is_err() || m.value < 0 || m.value >= 12 {
                            return Err(DtErr::FieldOverflow);
                        }
                        if cp + 1 + m.end != t.len() {
                            return Err(DtErr::BadFormat);
                        }
                        u = Unit::Month;
                        let val2 = if t[0] == b'-' { -m.value } else { m.value };
                        val = val.checked_mul(12).and_then(|v| v.checked_add(val2)).ok_or(DtErr::FieldOverflow)?;
                        fval = 0.0;
                    }
                    Some(b'.') => {
                        let fr = parse_fraction(&t[cp..])?;
                        fval = if t[0] == b'-' { -fr } else { fr };
                    }
                    None if cp > 0 => fval = 0.0,
                    _ => return Err(DtErr::BadFormat),
                }
                let ok = match u {
                    Unit::Microsec => {
                        tmask = M_MICROSECOND;
                        itm.micros(val, fval, 1)
                    }
                    Unit::Millisec => {
                        tmask = M_MILLISECOND;
                        itm.micros(val, fval, 1000)
                    }
                    Unit::Second => {
                        tmask = if fval == 0.0 { M_SECOND } else { M_ALL_SECS };
                        itm.micros(val, fval, USECS_PER_SEC)
                    }
                    Unit::Minute => {
                        tmask = M_MINUTE;
                        itm.micros(val, fval, USECS_PER_MINUTE)
                    }
                    Unit::Hour => {
                        tmask = M_HOUR;
                        unit = Some(Unit::Day);
                        itm.micros(val, fval, USECS_PER_HOUR)
                    }
                    Unit::Day => {
                        tmask = M_DAY;
                        itm.days(val, 1) && itm.fract_usec(fval, USECS_PER_DAY)
                    }
                    Unit::Week => {
                        tmask = M_WEEK;
                        itm.days(val, 7) && itm.fract_days(fval, 7)
                    }
                    Unit::Month => {
                        tmask = M_MONTH;
                        itm.months(val) && itm.fract_days(fval, DAYS_PER_MONTH)
                    }
                    Unit::Year | Unit::Decade | Unit::Century | Unit::Millennium => {
                        let (mask, scale) = match u {
                            Unit::Year => (M_YEAR, 1),
                            Unit::Decade => (M_DECADE, 10),
                            Unit::Century => (M_CENTURY, 100),
                            _ => (M_MILLENNIUM, 1000),
                        };
                        tmask = mask;
                        itm.years(val, scale) && itm.fract_years(fval, scale)
                    }
                    Unit::Quarter | Unit::Tz | Unit::Nothing => return Err(DtErr::BadFormat),
                };
                if !ok {
                    return Err(DtErr::FieldOverflow);
                }
            }
            Kind::String | Kind::Special => {
                match decode_units(t) {
                    Some(Token::Ignore) => continue,
                    Some(Token::Ago) => {
                        is_before = true;
                        // PostgreSQL's `type` becomes ago's table value, which is no unit:
                        // a number right before `ago` without a unit of its own is a
                        // format error.
                        unit = Some(Unit::Nothing);
                        continue;
                    }
                    Some(Token::Units(u)) => {
                        unit = Some(u);
                        tmask = 0;
                    }
                    None => return Err(DtErr::BadFormat),
                }
            }
        }
        if tmask & fmask != 0 {
            return Err(DtErr::BadFormat);
        }
        fmask |= tmask;
    }
    if fmask == 0 {
        return Err(DtErr::BadFormat);
    }
    if is_before {
        itm.usec = itm.usec.checked_neg().ok_or(DtErr::FieldOverflow)?;
        itm.mday = itm.mday.checked_neg().ok_or(DtErr::FieldOverflow)?;
        itm.mon = itm.mon.checked_neg().ok_or(DtErr::FieldOverflow)?;
        itm.year = itm.year.checked_neg().ok_or(DtErr::FieldOverflow)?;
    }
    Ok(itm)
}

/// `ParseISO8601Number`: a strtod number, its integer part truncated toward zero.
fn iso_number(s: &[u8], pos: &mut usize) -> DtResult<(i64, f64)> {
    let rest = &s[*pos..];
    match rest.first() {
        Some(c) if c.is_ascii_digit() || *c == b'-' || *c == b'.' => {}
        _ => return Err(DtErr::BadFormat),
    }
    let r = scan(rest, Format::F64).ok_or(DtErr::BadFormat)?;
    if r.len == 0 || r.out_of_range {
        return Err(DtErr::BadFormat);
    }
    let val = f64::from_bits(r.bits);
    *pos += r.len;
    if val.is_nan() || !(-1.0e15..=1.0e15).contains(&val) {
        return Err(DtErr::FieldOverflow);
    }
    let ipart = if val >= 0.0 { val.floor() } else { -(-val).floor() };
    Ok((ipart as i64, val - ipart))
}

fn iso_integer_width(s: &[u8]) -> usize {
    let s = s.strip_prefix(b"-").unwrap_or(s);
    s.iter().take_while(|c| c.is_ascii_digit()).count()
}

/// `DecodeISO8601Interval`.
fn decode_iso8601(s: &[u8]) -> DtResult<ItmIn> {
    let mut itm = ItmIn::default();
    if s.len() < 2 || s[0] != b'P' {
        return Err(DtErr::BadFormat);
    }
    let mut p = 1;
    let mut datepart = true;
    let mut havefield = false;
    let ovf = |ok: bool| if ok { Ok(()) } else { Err(DtErr::FieldOverflow) };
    while p < s.len() {
        if s[p] == b'T' {
            datepart = false;
            havefield = false;
            p += 1;
            continue;
        }
        let fieldstart = p;
        let (val, fval) = iso_number(s, &mut p)?;
        let unit = s.get(p).copied().unwrap_or(0);
        p += 1;
        if datepart {
            match unit {
                b'Y' => ovf(itm.years(val, 1) && itm.fract_years(fval, 1))?,
                b'M' => ovf(itm.months(val) && itm.fract_days(fval, DAYS_PER_MONTH))?,
                b'W' => ovf(itm.days(val, 7) && itm.fract_days(fval, 7))?,
                b'D' => ovf(itm.days(val, 1) && itm.fract_usec(fval, USECS_PER_DAY))?,
                b'T' | 0 | b'-' => {
                    if unit != b'-' && iso_integer_width(&s[fieldstart..]) == 8 && !havefield {
                        ovf(itm.years(val / 10000, 1)
                            && itm.months((val / 100) % 100)
                            && itm.days(val % 100, 1)
                            && itm.fract_usec(fval, USECS_PER_DAY))?;
                        if unit == 0 {
                            return Ok(itm);
                        }
                        datepart = false;
                        havefield = false;
                        continue;
                    }
                    if havefield {
                        return Err(DtErr::BadFormat);
                    }
                    ovf(itm.years(val, 1) && itm.fract_years(fval, 1))?;
                    if unit == 0 {
                        return Ok(itm);
                    }
                    if unit == b'T' {
                        datepart = false;
                        havefield = false;
                        continue;
                    }
                    let (val, fval) = iso_number(s, &mut p)?;
                    ovf(itm.months(val) && itm.fract_days(fval, DAYS_PER_MONTH))?;
                    match s.get(p) {
                        None => return Ok(itm),
                        Some(b'T') => {
                            datepart = false;
                            havefield = false;
                            continue;
                        }
                        Some(b'-') => p += 1,
                        Some(_) => return Err(DtErr::BadFormat),
                    }
                    let (val, fval) = iso_number(s, &mut p)?;
                    ovf(itm.days(val, 1) && itm.fract_usec(fval, USECS_PER_DAY))?;
                    match s.get(p) {
                        None => return Ok(itm),
                        Some(b'T') => {
                            datepart = false;
                            havefield = false;
                            continue;
                        }
                        Some(_) => return Err(DtErr::BadFormat),
                    }
                }
                _ => return Err(DtErr::BadFormat),
            }
        } else {
            match unit {
                b'H' => ovf(itm.micros(val, fval, USECS_PER_HOUR))?,
                b'M' => ovf(itm.micros(val, fval, USECS_PER_MINUTE))?,
                b'S' => ovf(itm.micros(val, fval, USECS_PER_SEC))?,
                0 | b':' => {
                    if unit == 0 && iso_integer_width(&s[fieldstart..]) == 6 && !havefield {
                        ovf(itm.micros(val / 10000, 0.0, USECS_PER_HOUR)
                            && itm.micros((val / 100) % 100, 0.0, USECS_PER_MINUTE)
                            && itm.micros(val % 100, 0.0, USECS_PER_SEC)
                            && itm.fract_usec(fval, 1))?;
                        return Ok(itm);
                    }
                    if havefield {
                        return Err(DtErr::BadFormat);
                    }
                    ovf(itm.micros(val, fval, USECS_PER_HOUR))?;
                    if unit == 0 {
                        return Ok(itm);
                    }
                    let (val, fval) = iso_number(s, &mut p)?;
                    ovf(itm.micros(val, fval, USECS_PER_MINUTE))?;
                    match s.get(p) {
                        None => return Ok(itm),
                        Some(b':') => p += 1,
                        Some(_) => return Err(DtErr::BadFormat),
                    }
                    let (val, fval) = iso_number(s, &mut p)?;
                    ovf(itm.micros(val, fval, USECS_PER_SEC))?;
                    if p == s.len() {
                        return Ok(itm);
                    }
                    return Err(DtErr::BadFormat);
                }
                _ => return Err(DtErr::BadFormat),
            }
        }
        havefield = true;
    }
    Ok(itm)
}

/// `interval_in` without a type modifier.
pub fn parse(s: &str) -> Result<Interval> {
    let b = s.as_bytes();
    let mut r = Fields::parse(b, INTERVAL_WORKBUF).and_then(|f| decode_interval(&f));
    if r.as_ref().err() == Some(&DtErr::BadFormat) {
        r = decode_iso8601(b);
    }
    match r {
        Ok(itm) => itm.to_interval().ok_or_else(out_of_range),
        Err(DtErr::FieldOverflow) | Err(DtErr::MdFieldOverflow) => {
            Err(PgError::new("22015", format!("interval field value out of range: \"{s}\"")))
        }
        Err(_) => Err(PgError::new("22007", format!("invalid input syntax for type interval: \"{s}\""))),
    }
}

// ---------------------------------------------------------------------------------------
// Date and time arithmetic

fn is_finite(t: i64) -> bool {
    t != i64::MIN && t != i64::MAX
}

/// `timestamp_pl_interval`: months first (clamped to the month's last day), then days, then
/// the time.
pub fn timestamp_plus(t: i64, span: &Interval) -> Result<i64> {
    if !is_finite(t) {
        return Ok(t);
    }
    let mut t = t;
    if span.months != 0 {
        let mut tm = datetime::timestamp2tm(t);
        let mut mon = i64::from(tm.mon) + i64::from(span.months);
        let mut year = i64::from(tm.year);
        if mon > 12 {
            year += (mon - 1) / 12;
            mon = (mon - 1) % 12 + 1;
        } else if mon < 1 {
            year += mon / 12 - 1;
            mon = mon % 12 + 12;
        }
        tm.year = i32::try_from(year).map_err(|_| timestamp_out_of_range())?;
        tm.mon = mon as i32;
        let last = days_in_month(tm.year, tm.mon);
        if tm.mday > last {
            tm.mday = last;
        }
        t = datetime::tm2timestamp(&tm).ok_or_else(timestamp_out_of_range)?;
    }
    if span.days != 0 {
        let mut tm = datetime::timestamp2tm(t);
        let julian = datetime::date2j(tm.year, tm.mon, tm.mday) + i64::from(span.days);
        let j = i32::try_from(julian).map_err(|_| timestamp_out_of_range())?;
        let (y, m, d) = datetime::j2date(j);
        tm.year = y;
        tm.mon = m;
        tm.mday = d;
        t = datetime::tm2timestamp(&tm).ok_or_else(timestamp_out_of_range)?;
    }
    let t = t.checked_add(span.micros).ok_or_else(timestamp_out_of_range)?;
    if !datetime::is_valid_timestamp(t) {
        return Err(timestamp_out_of_range());
    }
    Ok(t)
}

/// `timestamptz_pl_interval`: months, then days, on the session time zone's wall clock (so
/// `+ '1 day'` keeps the time of day across a daylight-saving change), each step turned back
/// into an instant there; then the time, as elapsed time.
pub fn timestamptz_plus(t: i64, span: &Interval) -> Result<i64> {
    if !is_finite(t) || crate::types::tz::session_is_utc() {
        return timestamp_plus(t, span);
    }
    let mut t = t;
    for part in [Interval { months: span.months, days: 0, micros: 0 }, Interval { months: 0, days: span.days, micros: 0 }] {
        if part.months != 0 || part.days != 0 {
            let local = timestamp_plus(crate::types::tz::local_of(t)?, &part)?;
            t = crate::types::tz::utc_of(local)?;
        }
    }
    timestamp_plus(t, &Interval { months: 0, days: 0, micros: span.micros })
}

/// `timestamptz_mi_interval`.
pub fn timestamptz_minus(t: i64, span: &Interval) -> Result<i64> {
    timestamptz_plus(t, &span.neg()?)
}

/// `timestamp_pl_interval` or, for a timestamptz (`tz`), `timestamptz_pl_interval`.
pub fn plus(t: i64, span: &Interval, tz: bool) -> Result<i64> {
    if tz {
        timestamptz_plus(t, span)
    } else {
        timestamp_plus(t, span)
    }
}

/// `timestamp_mi_interval` or, for a timestamptz (`tz`), `timestamptz_mi_interval`.
pub fn minus(t: i64, span: &Interval, tz: bool) -> Result<i64> {
    if tz {
        timestamptz_minus(t, span)
    } else {
        timestamp_minus(t, span)
    }
}

/// `timestamp_mi_interval`.
pub fn timestamp_minus(t: i64, span: &Interval) -> Result<i64> {
    // PostgreSQL negates each field without an overflow check; the minimum values have no
    // negation, so they are out of range here.
    timestamp_plus(t, &span.neg()?)
}

/// `timestamp_mi`: the difference as days and time (justified hours).
pub fn timestamp_diff(a: i64, b: i64) -> Result<Interval> {
    if !is_finite(a) || !is_finite(b) {
        return Err(PgError::new("22008", "cannot subtract infinite timestamps"));
    }
    let micros = a.checked_sub(b).ok_or_else(out_of_range)?;
    Interval { months: 0, days: 0, micros }.justify_hours()
}

/// `timestamp_age`: the symbolic difference in years, months, days and time.
pub fn age(a: i64, b: i64) -> Result<Interval> {
    age_of(a, b, false)
}

/// `timestamp_age`, or for timestamptz values (`tz`) `timestamptz_age`: the fields are the
/// session time zone's wall-clock ones.
pub fn age_of(a: i64, b: i64, tz: bool) -> Result<Interval> {
    if !is_finite(a) || !is_finite(b) {
        return Err(timestamp_out_of_range());
    }
    let local = |t: i64| if tz { crate::types::tz::local_of(t) } else { Ok(t) };
    let (t1, t2): (Tm, Tm) = (datetime::timestamp2tm(local(a)?), datetime::timestamp2tm(local(b)?));
    // The symbolic difference, field by field: [usec, sec, min, hour, mday, mon, year].
    let mut f: [i64; 7] = [
        i64::from(t1.fsec) - i64::from(t2.fsec),
        i64::from(t1.sec - t2.sec),
        i64::from(t1.min - t2.min),
        i64::from(t1.hour - t2.hour),
        i64::from(t1.mday - t2.mday),
        i64::from(t1.mon - t2.mon),
        i64::from(t1.year - t2.year),
    ];
    // Worked on as a positive difference, the sign put back at the end.
    let flip = a < b;
    let negate = |f: &mut [i64; 7]| f.iter_mut().for_each(|x| *x = -*x);
    if flip {
        negate(&mut f);
    }
    // Negative fields borrow from the next larger one; a day borrows the month before the
    // later timestamp's month.
    let base = if flip { &t1 } else { &t2 };
    let carry = [USECS_PER_SEC, 60, 60, 24, i64::from(days_in_month(base.year, base.mon)), 12];
    for i in 0..6 {
        while f[i] < 0 {
            f[i] += carry[i];
            f[i + 1] -= 1;
        }
    }
    if flip {
        negate(&mut f);
    }
    let [fsec, sec, min, hour, mday, mon, year] = f;
    let months = year * 12 + mon;
    let micros = ((hour * 60 + min) * 60 + sec) * USECS_PER_SEC + fsec;
    Ok(Interval {
        months: i32::try_from(months).map_err(|_| out_of_range())?,
        days: i32::try_from(mday).map_err(|_| out_of_range())?,
        micros,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(s: &str) -> String {
        parse(s).map(|i| i.to_text()).unwrap_or_else(|e| format!("{} {}", e.code, e.message))
    }

    #[test]
    fn input_and_output_as_postgres() {
        for (input, want) in [
            ("1 day", "1 day"),
            ("1 year 2 months 3 days 04:05:06.789", "1 year 2 mons 3 days 04:05:06.789"),
            ("-1 day +02:03", "-1 days +02:03:00"),
            ("1.5 months", "1 mon 15 days"),
            ("@ 1 hour ago", "-01:00:00"),
            ("1-2", "1 year 2 mons"),
            ("0", "00:00:00"),
            ("100:00:00", "100:00:00"),
            ("-1:30", "-01:30:00"),
            ("P1Y2M3DT4H5M6S", "1 year 2 mons 3 days 04:05:06"),
            ("P0001-02-03T04:05:06", "1 year 2 mons 3 days 04:05:06"),
            ("PT36H", "36:00:00"),
            ("1 week", "7 days"),
            ("2 centuries 1 decade", "210 years"),
            ("1 microsecond", "00:00:00.000001"),
            ("1 day -1 second", "1 day -00:00:01"),
            ("1 day 2 days", "22007 invalid input syntax for type interval: \"1 day 2 days\""),
            ("garbage", "22007 invalid input syntax for type interval: \"garbage\""),
            ("2147483648 days", "22015 interval field value out of range: \"2147483648 days\""),
        ] {
            assert_eq!(rt(input), want, "{input}");
        }
    }

    #[test]
    fn arithmetic_as_postgres() {
        let iv = |s: &str| parse(s).unwrap();
        assert_eq!(iv("1 mon").span(), iv("30 days").span());
        assert_eq!(iv("1 mon 10 days").mul(1.5).unwrap().to_text(), "1 mon 30 days");
        assert_eq!(iv("1 day").div(3.0).unwrap().to_text(), "08:00:00");
        assert_eq!(iv("36:00:00").justify_hours().unwrap().to_text(), "1 day 12:00:00");
        assert_eq!(iv("-1 mon 61 days -1 hour").justify_interval().unwrap().to_text(), "1 mon 23:00:00");
        // 2020-01-31 + 1 month = 2020-02-29 (clamped).
        let t = datetime::parse_timestamp("2020-01-31", -1).unwrap();
        let mut out = Vec::new();
        datetime::format_timestamp(timestamp_plus(t, &iv("1 mon")).unwrap(), &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "2020-02-29 00:00:00");
        let a = datetime::parse_timestamp("2020-03-01 10:00", -1).unwrap();
        let b = datetime::parse_timestamp("2019-12-31 12:00", -1).unwrap();
        assert_eq!(timestamp_diff(a, b).unwrap().to_text(), "60 days 22:00:00");
        assert_eq!(age(a, b).unwrap().to_text(), "2 mons 22:00:00");
    }
}

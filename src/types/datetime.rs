//! `date` and `timestamp [without time zone]` I/O, ported from PostgreSQL 15's `date.c`
//! (`date_in`, `date_out`, `date_recv`), `timestamp.c` (`timestamp_in`, `timestamp_out`,
//! `timestamp_recv`, `tm2timestamp`, `timestamp2tm`, `AdjustTimestampForTypmod`) and the
//! calendar arithmetic and ISO output of `datetime.c` (`date2j`, `j2date`, `EncodeDateOnly`,
//! `EncodeDateTime` with DateStyle ISO).
//!
//! Storage: a date is `i32` days since 2000-01-01, a timestamp `i64` microseconds since
//! 2000-01-01 00:00:00; `MIN`/`MAX` of each are -infinity/infinity. Valid finite values run
//! from 4714-11-24 BC to 5874897-12-31 (dates) and to 294276-12-31 23:59:59.999999
//! (timestamps). The common ISO forms take an allocation-free fast path; everything else
//! goes through [`super::dt_parse`].

use super::dt_fields::days_in_month;
use super::dt_parse::{decode, DType, DtErr, Tm, DATE_WORKBUF, TIMESTAMP_WORKBUF};
use super::util::push_padded;
use crate::error::{sqlstate, PgError, Result};

pub(crate) const POSTGRES_EPOCH_JDATE: i64 = 2_451_545;
const UNIX_EPOCH_JDATE: i64 = 2_440_588;
pub(crate) const USECS_PER_DAY: i64 = 86_400_000_000;
pub(crate) const USECS_PER_HOUR: i64 = 3_600_000_000;
pub(crate) const USECS_PER_MINUTE: i64 = 60_000_000;
pub(crate) const USECS_PER_SEC: i64 = 1_000_000;
/// Julian day of 5874898-01-01, the first date out of range.
const DATE_END_JULIAN: i64 = 2_147_483_494;
/// 4714-11-24 00:00:00 BC.
const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;
/// 294277-01-01 00:00:00, the first timestamp out of range.
const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000;
/// 1970-01-01 as a date and as a timestamp.
const EPOCH_DATE: i32 = -10_957;
const EPOCH_TIMESTAMP: i64 = -946_684_800_000_000;

/// Julian day number of a proleptic Gregorian date (`date2j`).
pub(crate) fn date2j(year: i32, month: i32, day: i32) -> i64 {
    let (y, m) = if month > 2 { (i64::from(year) + 4800, i64::from(month) + 1) } else { (i64::from(year) + 4799, i64::from(month) + 13) };
    let century = y / 100;
    y * 365 - 32167 + y / 4 - century + century / 4 + 7834 * m / 256 + i64::from(day)
}

/// Calendar date of a Julian day (`j2date`, in its unsigned 32-bit arithmetic).
pub(crate) fn j2date(jd: i32) -> (i32, i32, i32) {
    let mut julian = (jd as u32).wrapping_add(32044);
    let mut quad = julian / 146_097;
    let extra = (julian.wrapping_sub(quad.wrapping_mul(146_097))).wrapping_mul(4).wrapping_add(3);
    julian = julian.wrapping_add(60).wrapping_add(quad.wrapping_mul(3)).wrapping_add(extra / 146_097);
    quad = julian / 1461;
    julian = julian.wrapping_sub(quad.wrapping_mul(1461));
    let mut y = julian.wrapping_mul(4) / 1461;
    julian = if y != 0 { (julian + 305) % 365 } else { (julian + 306) % 366 } + 123;
    y = y.wrapping_add(quad.wrapping_mul(4));
    let year = (y as i32).wrapping_sub(4800);
    quad = julian.wrapping_mul(2141) / 65536;
    let day = julian.wrapping_sub(7834u32.wrapping_mul(quad) / 256) as i32;
    let month = ((quad + 10) % 12 + 1) as i32;
    (year, month, day)
}

/// `IS_VALID_JULIAN`: year/month inside the range the Julian-day routines handle.
fn is_valid_julian(y: i32, m: i32) -> bool {
    (y > -4713 || (y == -4713 && m >= 11)) && (y < 5_874_898 || (y == 5_874_898 && m < 6))
}

fn is_valid_date(d: i64) -> bool {
    (-POSTGRES_EPOCH_JDATE..DATE_END_JULIAN - POSTGRES_EPOCH_JDATE).contains(&d)
}

pub(crate) fn is_valid_timestamp(t: i64) -> bool {
    (MIN_TIMESTAMP..END_TIMESTAMP).contains(&t)
}

// ---------------------------------------------------------------------------------------
// Input

/// `date_in`.
pub(crate) fn parse_date(s: &str) -> Result<i32> {
    if let Some((y, m, d)) = fast_ymd(s.as_bytes()) {
        return Ok((date2j(y, m, d) - POSTGRES_EPOCH_JDATE) as i32);
    }
    let (dtype, tm) = decode(s.as_bytes(), DATE_WORKBUF).map_err(|e| dt_error(e, s, "date"))?;
    match dtype {
        DType::Date => date_from_ymd(tm.year, tm.mon, tm.mday, s),
        DType::Epoch => Ok(EPOCH_DATE),
        DType::Late => Ok(i32::MAX),
        DType::Early => Ok(i32::MIN),
    }
}

fn date_from_ymd(y: i32, m: i32, d: i32, s: &str) -> Result<i32> {
    let out_of_range = || PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, format!("date out of range: \"{s}\""));
    if !is_valid_julian(y, m) {
        return Err(out_of_range());
    }
    let date = date2j(y, m, d) - POSTGRES_EPOCH_JDATE;
    if !is_valid_date(date) {
        return Err(out_of_range());
    }
    Ok(date as i32)
}

/// `timestamp_in`, then rounding to the column's precision.
pub(crate) fn parse_timestamp(s: &str, typmod: i32) -> Result<i64> {
    let t = match fast_timestamp(s.as_bytes()) {
        Some(t) => t,
        None => parse_timestamp_general(s)?,
    };
    adjust_timestamp_for_typmod(t, typmod)
}

fn parse_timestamp_general(s: &str) -> Result<i64> {
    let (dtype, tm) = decode(s.as_bytes(), TIMESTAMP_WORKBUF).map_err(|e| dt_error(e, s, "timestamp"))?;
    match dtype {
        DType::Date => {
            tm2timestamp(&tm).ok_or_else(|| PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, format!("timestamp out of range: \"{s}\"")))
        }
        DType::Epoch => Ok(EPOCH_TIMESTAMP),
        DType::Late => Ok(i64::MAX),
        DType::Early => Ok(i64::MIN),
    }
}

/// `timestamptz_in`: a numeric offset or a fixed zone abbreviation (`EST`, `CEST`) in the
/// input is applied, a time without one is the session time zone's (`tz::utc_of`); an
/// abbreviation whose offset depends on the date (`MSK`) is refused (0A000) rather than
/// guessed. Then rounding to the column's precision.
pub(crate) fn parse_timestamptz(s: &str, typmod: i32) -> Result<i64> {
    let t = match fast_timestamp(s.as_bytes()) {
        Some(t) => super::tz::utc_of_text(t).map_err(|e| in_zone_error(e, s))?,
        None => {
            let (dtype, tm) = decode(s.as_bytes(), TIMESTAMP_WORKBUF).map_err(|e| dt_error(e, s, "timestamp with time zone"))?;
            match dtype {
                DType::Date => {
                    if tm.tz_abbrev {
                        return Err(PgError::feature(format!(
                            "a time zone abbreviation at a date its zone did not use it (MSK in the summer of 1990) is not supported by heapstore in timestamp with time zone input: \"{s}\""
                        ))
                        .with_hint("Write the offset instead, as in 2024-01-01 12:00:00+03."));
                    }
                    let overflow = || PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, format!("timestamp out of range: \"{s}\""));
                    match tm.tz {
                        Some(east) => tm2timestamp(&tm)
                            .and_then(|local| local.checked_sub(i64::from(east) * USECS_PER_SEC))
                            .filter(|&t| is_valid_timestamp(t))
                            .ok_or_else(overflow)?,
                        None => super::tz::utc_of_text(tm2timestamp(&tm).ok_or_else(overflow)?).map_err(|e| in_zone_error(e, s))?,
                    }
                }
                DType::Epoch => EPOCH_TIMESTAMP,
                DType::Late => i64::MAX,
                DType::Early => i64::MIN,
            }
        }
    };
    adjust_timestamp_for_typmod(t, typmod)
}

/// `tm2timestamp` without a time zone.
pub(crate) fn tm2timestamp(tm: &Tm) -> Option<i64> {
    if !is_valid_julian(tm.year, tm.mon) {
        return None;
    }
    let date = date2j(tm.year, tm.mon, tm.mday) - POSTGRES_EPOCH_JDATE;
    let time = ((i64::from(tm.hour) * 60 + i64::from(tm.min)) * 60 + i64::from(tm.sec)) * USECS_PER_SEC + i64::from(tm.fsec);
    let t = date.checked_mul(USECS_PER_DAY)?.checked_add(time)?;
    is_valid_timestamp(t).then_some(t)
}

/// `DateTimeParseError`.
#[cold]
pub(crate) fn dt_error(e: DtErr, s: &str, type_name: &str) -> PgError {
    match e {
        DtErr::BadFormat => PgError::new(sqlstate::INVALID_DATETIME_FORMAT, format!("invalid input syntax for type {type_name}: \"{s}\"")),
        DtErr::FieldOverflow => PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, format!("date/time field value out of range: \"{s}\"")),
        DtErr::MdFieldOverflow => PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, format!("date/time field value out of range: \"{s}\""))
            .with_hint("Perhaps you need a different \"datestyle\" setting."),
        DtErr::TzDispOverflow => {
            PgError::new(sqlstate::INVALID_TIME_ZONE_DISPLACEMENT_VALUE, format!("time zone displacement out of range: \"{s}\""))
        }
        DtErr::TzNotRecognized(name) => PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("time zone \"{name}\" not recognized")),
        DtErr::Refused(code, message) => PgError::new(code, message),
    }
}

/// `AdjustTimestampForTypmod`: round to `typmod` fractional digits (away from zero on
/// ties). Like PostgreSQL, the result is not range-checked again.
pub(crate) fn adjust_timestamp_for_typmod(t: i64, typmod: i32) -> Result<i64> {
    const SCALES: [i64; 7] = [1_000_000, 100_000, 10_000, 1_000, 100, 10, 1];
    if t == i64::MIN || t == i64::MAX || typmod == -1 || typmod == 6 {
        return Ok(t);
    }
    let Some(&scale) = usize::try_from(typmod).ok().and_then(|i| SCALES.get(i)) else {
        return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("timestamp({typmod}) precision must be between 0 and 6")));
    };
    let offset = scale / 2;
    Ok(if t >= 0 { (t + offset) / scale * scale } else { -((-t + offset) / scale * scale) })
}

// ---------------------------------------------------------------------------------------
// Fast paths: `YYYY-MM-DD` and `YYYY-MM-DD HH:MM:SS[.ffffff]` with a 4-digit year.

fn digits(b: &[u8]) -> Option<i32> {
    b.iter().try_fold(0i32, |acc, &c| c.is_ascii_digit().then(|| acc * 10 + i32::from(c - b'0')))
}

/// A plain ISO date with a valid year 1..9999, month and day; anything else (including
/// every error) is left to the general decoder.
fn fast_ymd(b: &[u8]) -> Option<(i32, i32, i32)> {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (digits(&b[..4])?, digits(&b[5..7])?, digits(&b[8..])?);
    let valid = y >= 1 && (1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m);
    valid.then_some((y, m, d))
}

fn fast_timestamp(b: &[u8]) -> Option<i64> {
    if b.len() < 19 || !matches!(b[10], b' ' | b'T' | b't') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, m, d) = fast_ymd(&b[..10])?;
    let (hh, mi, ss) = (digits(&b[11..13])?, digits(&b[14..16])?, digits(&b[17..19])?);
    if hh > 23 || mi > 59 || ss > 59 {
        return None;
    }
    let fsec = match &b[19..] {
        [] => 0,
        [b'.', frac @ ..] if (1..=6).contains(&frac.len()) => digits(frac)? * [100_000, 10_000, 1_000, 100, 10, 1][frac.len() - 1],
        _ => return None,
    };
    let date = date2j(y, m, d) - POSTGRES_EPOCH_JDATE;
    let secs = (i64::from(hh) * 60 + i64::from(mi)) * 60 + i64::from(ss);
    Some(date * USECS_PER_DAY + secs * USECS_PER_SEC + i64::from(fsec))
}

// ---------------------------------------------------------------------------------------
// Output

/// `date_out` with DateStyle ISO.
pub(crate) fn format_date(date: i32, out: &mut Vec<u8>) {
    match date {
        i32::MIN => out.extend_from_slice(b"-infinity"),
        i32::MAX => out.extend_from_slice(b"infinity"),
        _ => {
            let (y, m, d) = j2date((i64::from(date) + POSTGRES_EPOCH_JDATE) as i32);
            push_ymd(y, m, d, out);
            push_bc(y, out);
        }
    }
}

/// `timestamp_out` with DateStyle ISO.
pub(crate) fn format_timestamp(t: i64, out: &mut Vec<u8>) {
    match t {
        i64::MIN => out.extend_from_slice(b"-infinity"),
        i64::MAX => out.extend_from_slice(b"infinity"),
        _ => {
            let tm = timestamp2tm(t);
            push_ymd(tm.year, tm.mon, tm.mday, out);
            out.push(b' ');
            push_padded(out, tm.hour as u64, 2);
            out.push(b':');
            push_padded(out, tm.min as u64, 2);
            out.push(b':');
            push_padded(out, tm.sec as u64, 2);
            push_fraction(tm.fsec, out);
            push_bc(tm.year, out);
        }
    }
}

/// A conversion to the session's zone that failed on a text input `s`: a timestamp out of
/// range names the input, as PostgreSQL's.
#[cold]
fn in_zone_error(e: PgError, s: &str) -> PgError {
    if e.code == "22008" {
        PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, format!("timestamp out of range: \"{s}\""))
    } else {
        e
    }
}

/// `timestamptz_out` with DateStyle ISO: the wall-clock time in the session's time zone and
/// its offset there (`+00` in UTC; `xsd`: `+00:00`, as JSON writes it).
pub(crate) fn format_timestamptz(t: i64, out: &mut Vec<u8>) {
    format_timestamptz_as(t, false, out)
}

pub(crate) fn format_timestamptz_as(t: i64, xsd: bool, out: &mut Vec<u8>) {
    match t {
        i64::MIN => out.extend_from_slice(b"-infinity"),
        i64::MAX => out.extend_from_slice(b"infinity"),
        _ => {
            // An instant whose wall-clock time the zone cannot give (beyond the named zone's
            // rules, or past timestamp's range there) is written in UTC: the same instant.
            let (local, east) = match super::tz::offset_of(t) {
                Ok(east) => match t.checked_add(i64::from(east) * USECS_PER_SEC).filter(|&l| is_valid_timestamp(l)) {
                    Some(l) => (l, east),
                    None => (t, 0),
                },
                Err(_) => (t, 0),
            };
            let before = out.len();
            format_timestamp(local, out);
            // The zone goes before a trailing " BC".
            if out.ends_with(b" BC") {
                let at = out.len() - 3;
                debug_assert!(at > before);
                let mut zone = Vec::with_capacity(10);
                super::tz::push_offset(east, xsd, &mut zone);
                out.splice(at..at, zone);
            } else {
                super::tz::push_offset(east, xsd, out);
            }
        }
    }
}

/// `timestamp2tm` without a time zone.
pub(crate) fn timestamp2tm(t: i64) -> Tm {
    let mut date = t / USECS_PER_DAY;
    let mut time = t - date * USECS_PER_DAY;
    if time < 0 {
        time += USECS_PER_DAY;
        date -= 1;
    }
    let (year, mon, mday) = j2date((date + POSTGRES_EPOCH_JDATE) as i32);
    let (hour, min, sec, fsec) = dt2time(time);
    Tm { year, mon, mday, hour, min, sec, fsec, ..Tm::default() }
}

/// `dt2time`: microseconds within a day as (hour, minute, second, microsecond).
pub(crate) fn dt2time(time: i64) -> (i32, i32, i32, i32) {
    let (hour, min, sec, fsec) = split_time(time);
    (hour as i32, min as i32, sec as i32, fsec as i32)
}

/// Microseconds as (hours, minutes, seconds, microseconds), each truncated toward zero (so
/// each carries the sign of the whole; hours unbounded, as an interval's are).
pub(crate) fn split_time(mut time: i64) -> (i64, i64, i64, i64) {
    let hour = time / USECS_PER_HOUR;
    time -= hour * USECS_PER_HOUR;
    let min = time / USECS_PER_MINUTE;
    time -= min * USECS_PER_MINUTE;
    let sec = time / USECS_PER_SEC;
    (hour, min, sec, time - sec * USECS_PER_SEC)
}

/// `YYYY-MM-DD`, the year as its absolute AD/BC number, at least four digits.
fn push_ymd(y: i32, m: i32, d: i32, out: &mut Vec<u8>) {
    let display_year = if y > 0 { i64::from(y) } else { -(i64::from(y) - 1) };
    push_padded(out, display_year.unsigned_abs(), 4);
    out.push(b'-');
    push_padded(out, m.unsigned_abs().into(), 2);
    out.push(b'-');
    push_padded(out, d.unsigned_abs().into(), 2);
}

fn push_bc(y: i32, out: &mut Vec<u8>) {
    if y <= 0 {
        out.extend_from_slice(b" BC");
    }
}

/// `.ffffff` with trailing zeros removed; nothing for whole seconds.
pub(crate) fn push_fraction(fsec: i32, out: &mut Vec<u8>) {
    if fsec == 0 {
        return;
    }
    let mut v = fsec.unsigned_abs();
    let mut width = 6;
    while v % 10 == 0 {
        v /= 10;
        width -= 1;
    }
    out.push(b'.');
    push_padded(out, v.into(), width);
}

// ---------------------------------------------------------------------------------------
// Binary receive checks and the current time

/// `date_recv`: finite values must be in `date_in`'s range.
pub(crate) fn check_date_recv(d: i32) -> Result<i32> {
    if d == i32::MIN || d == i32::MAX || is_valid_date(i64::from(d)) {
        Ok(d)
    } else {
        Err(PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "date out of range"))
    }
}

/// `timestamp_recv`: finite values must be in range; then rounded to the typmod.
pub(crate) fn check_timestamp_recv(t: i64, typmod: i32) -> Result<i64> {
    if t != i64::MIN && t != i64::MAX && !is_valid_timestamp(t) {
        return Err(PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "timestamp out of range"));
    }
    adjust_timestamp_for_typmod(t, typmod)
}

/// The current transaction's start (the clock where none is installed) as fields on the
/// session's clocks, and the zone's offset east of UTC then, in seconds
/// (`GetCurrentTimeUsec`).
pub(crate) fn now_local_tm() -> (Tm, i32) {
    let now = super::tz::transaction_start().unwrap_or_else(now_us);
    match super::tz::offset_of(now) {
        Ok(east) => (timestamp2tm(now + i64::from(east) * USECS_PER_SEC), east),
        Err(_) => (timestamp2tm(now), 0),
    }
}

/// The current time: microseconds since 2000-01-01 00:00:00 UTC (`GetCurrentTimestamp`).
pub(crate) fn now_us() -> i64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    let unix_us = match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_micros()).unwrap_or(i64::MAX),
    };
    unix_us.saturating_sub((POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY)
}

/// `timeofday()`: the current time as text on the session's clocks,
/// `Sat Nov 28 08:58:06.485302 2026 UTC`, with the zone's abbreviation.
pub(crate) fn time_of_day() -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let now = now_us();
    let (t, zone) = match (super::tz::local_of(now), super::tz::abbreviation_of(now)) {
        (Ok(t), Ok(z)) => (t, z),
        _ => (now, "UTC".to_string()),
    };
    let tm = timestamp2tm(t);
    // 2000-01-01 was a Saturday.
    let dow = (t.div_euclid(USECS_PER_DAY) + 6).rem_euclid(7) as usize;
    format!(
        "{} {} {:02} {:02}:{:02}:{:02}.{:06} {} {zone}",
        DAYS[dow],
        MONTHS[(tm.mon - 1) as usize],
        tm.mday,
        tm.hour,
        tm.min,
        tm.sec,
        tm.fsec,
        tm.year
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> String {
        let t = parse_timestamp(s, -1).unwrap_or_else(|e| panic!("{s}: {e}"));
        let mut out = Vec::new();
        format_timestamp(t, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    fn date(s: &str) -> String {
        let d = parse_date(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        let mut out = Vec::new();
        format_date(d, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn julian_roundtrip() {
        for jd in [0, 1, 2_451_545, 2_147_483_493, 1_721_426, 1_721_425] {
            let (y, m, d) = j2date(jd);
            assert_eq!(date2j(y, m, d), i64::from(jd));
        }
        assert_eq!(j2date(2_451_545), (2000, 1, 1));
    }

    #[test]
    fn dates() {
        assert_eq!(date("2000-01-01"), "2000-01-01");
        assert_eq!(date("4714-11-24 BC"), "4714-11-24 BC");
        assert_eq!(date("4713-01-01 BC"), "4713-01-01 BC");
        assert_eq!(date("5874897-12-31"), "5874897-12-31");
        assert_eq!(date("epoch"), "1970-01-01");
        assert_eq!(date(" infinity "), "infinity");
        assert_eq!(date("0044-03-15 BC"), "0044-03-15 BC");
        assert_eq!(date("Jan 2 2000"), "2000-01-02");
        assert_eq!(date("20000102"), "2000-01-02");
        assert_eq!(date("1/2/2000"), "2000-01-02");
        assert_eq!(date("0099-01-01"), "0099-01-01");
    }

    #[test]
    fn timestamps() {
        assert_eq!(ts("1990-01-02 05:05:29.000001"), "1990-01-02 05:05:29.000001");
        assert_eq!(ts("1999-12-31T23:59:59.999999"), "1999-12-31 23:59:59.999999");
        assert_eq!(ts("2000-01-01 12:00"), "2000-01-01 12:00:00");
        assert_eq!(ts("2000-01-01 12:00:00.1234567"), "2000-01-01 12:00:00.123457");
        assert_eq!(ts("2000-01-01 23:59:59.9999995"), "2000-01-02 00:00:00");
        assert_eq!(ts("0044-03-15 00:00:00 BC"), "0044-03-15 00:00:00 BC");
        assert_eq!(ts("294276-12-31 23:59:59.999999"), "294276-12-31 23:59:59.999999");
        assert_eq!(ts("4714-11-24 00:00:00 BC"), "4714-11-24 00:00:00 BC");
        assert_eq!(ts("epoch"), "1970-01-01 00:00:00");
        assert_eq!(ts("2000-01-01 12:00:00+05:30"), "2000-01-01 12:00:00");
        assert_eq!(ts("20011225T040506.789-07"), "2001-12-25 04:05:06.789");
    }

    #[test]
    fn typmod_rounding() {
        let t = parse_timestamp("2000-01-01 00:00:00.5", 0).ok();
        assert_eq!(t, Some(1_000_000));
        // Ties round away from 2000-01-01, i.e. backwards in time before it.
        let t = parse_timestamp("1999-12-31 23:59:59.5", 0).ok();
        assert_eq!(t, Some(-1_000_000));
        let t = parse_timestamp("1999-12-31 23:59:59.44", 1).ok();
        assert_eq!(t, Some(-600_000));
    }
}

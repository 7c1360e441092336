//! `time [without time zone]` and `time with time zone`, ported from PostgreSQL 15's `date.c`
//! (`time_in`, `time_out`, `time_recv`, `time_send`, the `timetz_` ones, `AdjustTimeForTypmod`,
//! the casts and the arithmetic) over [`super::dt_parse::decode_time_only`].
//!
//! Storage: a time is `i64` microseconds since midnight, `0..=86_400_000_000` (24:00:00 is a
//! value, as in PostgreSQL). A timetz is that time and its zone, `i32` seconds **west** of UTC
//! (PostgreSQL's sign: the opposite of the offset it prints), 12 bytes little-endian.
//!
//! Invariants: a time is within `0..=USECS_PER_DAY` (input, receive and arithmetic keep it
//! there; receive refuses others, 22007); a timetz zone is within ±15:59:59 (receive refuses
//! others, 22009). Two timetz values are equal only with the same time and the same zone;
//! they order by the instant (time plus zone), then by zone (`timetz_cmp_internal`), which
//! [`TimeTz::order_key`] gives and the B-tree key encodes.

use super::datetime::{dt2time, dt_error, push_fraction, USECS_PER_DAY, USECS_PER_SEC};
use super::dt_parse::decode_time_only;
use super::interval::Interval;
use super::util::{push_padded, stored, wire_exact};
use crate::error::{sqlstate, PgError, Result};

/// Storage size of a timetz: the time, then the zone.
pub const TIMETZ_LEN: usize = 12;
/// `TZDISP_LIMIT`: a zone must be strictly within 16 hours of UTC.
const TZDISP_LIMIT: i32 = 16 * 3600;
/// `MAX_TIME_PRECISION`.
const MAX_PRECISION: i32 = 6;

/// A time with time zone: microseconds since midnight and the zone in seconds west of UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimeTz {
    pub time: i64,
    /// Seconds **west** of UTC (PostgreSQL's sign): `10:00+02` has zone `-7200`.
    pub zone: i32,
}

impl TimeTz {
    /// Appends the storage form.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.time.to_le_bytes());
        out.extend_from_slice(&self.zone.to_le_bytes());
    }

    /// Reads the storage form.
    pub fn decode(v: &[u8]) -> TimeTz {
        let time = i64::from_le_bytes(stored(&v[..8.min(v.len())]));
        let zone = i32::from_le_bytes(stored(v.get(8..).unwrap_or(&[])));
        TimeTz { time, zone }
    }

    /// `timetz_send`: the time, then the zone, big-endian.
    pub fn send(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.time.to_be_bytes());
        out.extend_from_slice(&self.zone.to_be_bytes());
    }

    /// `timetz_recv`: range checks, then the precision.
    pub fn recv(wire: &[u8], typmod: i32) -> Result<TimeTz> {
        let b: [u8; TIMETZ_LEN] = wire_exact(wire)?;
        let time = check_time_recv(i64::from_be_bytes(stored(&b[..8])), -1)?;
        let zone = i32::from_be_bytes(stored(&b[8..]));
        if zone <= -TZDISP_LIMIT || zone >= TZDISP_LIMIT {
            return Err(PgError::new(sqlstate::INVALID_TIME_ZONE_DISPLACEMENT_VALUE, "time zone displacement out of range"));
        }
        Ok(TimeTz { time: adjust_time(time, typmod), zone })
    }

    /// What orders timetz values: the instant (time plus zone), then the zone.
    pub fn order_key(&self) -> (i64, i32) {
        (self.time + i64::from(self.zone) * USECS_PER_SEC, self.zone)
    }

    /// `timetz_out`: `10:00:00+02`, `10:00:00.5-03:30`.
    pub fn write_text(&self, out: &mut Vec<u8>) {
        format_time(self.time, out);
        super::tz::push_offset(-self.zone, false, out);
    }
}

/// `time_in`: any zone or date in the text is checked, then dropped.
pub(crate) fn parse_time(s: &str, typmod: i32) -> Result<i64> {
    let tm = decode_time_only(s.as_bytes(), false).map_err(|e| dt_error(e, s, "time"))?;
    Ok(adjust_time(tm_time(&tm), typmod))
}

/// `timetz_in`: the zone is the text's, else the session's on the text's date (today's
/// without one). A zone abbreviation whose offset depends on the date (MSK) is refused.
pub(crate) fn parse_timetz(s: &str, typmod: i32) -> Result<TimeTz> {
    let tm = decode_time_only(s.as_bytes(), true).map_err(|e| dt_error(e, s, "time with time zone"))?;
    let Some(east) = tm.tz.filter(|_| !tm.tz_abbrev) else {
        return Err(PgError::feature(format!(
            "a time zone abbreviation at a date its zone did not use it (MSK in the summer of 1990) is not supported by heapstore in time with time zone input: \"{s}\""
        )));
    };
    Ok(TimeTz { time: adjust_time(tm_time(&tm), typmod), zone: -east })
}

fn tm_time(tm: &super::dt_parse::Tm) -> i64 {
    ((i64::from(tm.hour) * 60 + i64::from(tm.min)) * 60 + i64::from(tm.sec)) * USECS_PER_SEC + i64::from(tm.fsec)
}

/// `time_out`: `HH:MM:SS` with the fraction's significant digits.
pub(crate) fn format_time(t: i64, out: &mut Vec<u8>) {
    let (h, m, s, fsec) = dt2time(t);
    push_padded(out, u64::from(h.unsigned_abs()), 2);
    out.push(b':');
    push_padded(out, u64::from(m.unsigned_abs()), 2);
    out.push(b':');
    push_padded(out, u64::from(s.unsigned_abs()), 2);
    push_fraction(fsec, out);
}

/// `AdjustTimeForTypmod`: rounds to `typmod` fractional digits (half away from zero; a time
/// may round up to 24:00:00, as PostgreSQL's does).
pub fn adjust_time(t: i64, typmod: i32) -> i64 {
    const SCALES: [i64; 7] = [1_000_000, 100_000, 10_000, 1_000, 100, 10, 1];
    match usize::try_from(typmod).ok().and_then(|i| SCALES.get(i)) {
        Some(&scale) if typmod < MAX_PRECISION => (t + scale / 2) / scale * scale,
        _ => t,
    }
}

/// `time_recv`: within a day, then rounded to the precision.
pub(crate) fn check_time_recv(t: i64, typmod: i32) -> Result<i64> {
    if !(0..=USECS_PER_DAY).contains(&t) {
        return Err(PgError::new(sqlstate::INVALID_DATETIME_FORMAT, "time out of range"));
    }
    Ok(adjust_time(t, typmod))
}

/// `time_pl_interval`: the interval's time part added, wrapped into the day (its days and
/// months do nothing). The sum wraps around 64 bits first, as PostgreSQL 15's does.
pub fn plus_interval(t: i64, iv: &Interval) -> i64 {
    t.wrapping_add(iv.micros).rem_euclid(USECS_PER_DAY)
}

/// `time_mi_interval` (wrapping as [`plus_interval`]).
pub fn minus_interval(t: i64, iv: &Interval) -> i64 {
    t.wrapping_sub(iv.micros).rem_euclid(USECS_PER_DAY)
}

/// `interval_time`: the interval's time part, wrapped into the day.
pub fn of_interval(iv: &Interval) -> i64 {
    iv.micros.rem_euclid(USECS_PER_DAY)
}

/// `timestamp_time`: the time of day of a timestamp; None (SQL NULL) for an infinity.
pub fn of_timestamp(t: i64) -> Option<i64> {
    (t != i64::MIN && t != i64::MAX).then(|| t.rem_euclid(USECS_PER_DAY))
}

/// `timestamptz_timetz`: the session's wall-clock time at instant `utc` and its zone there;
/// None (SQL NULL) for an infinity.
pub fn timetz_of_instant(utc: i64) -> Result<Option<TimeTz>> {
    if utc == i64::MIN || utc == i64::MAX {
        return Ok(None);
    }
    let local = super::tz::local_of(utc)?;
    let east = ((local - utc) / USECS_PER_SEC) as i32;
    Ok(Some(TimeTz { time: local.rem_euclid(USECS_PER_DAY), zone: -east }))
}

/// `time_timetz`: the time with the session zone's offset today (on the transaction's date).
pub fn timetz_of_time(t: i64) -> Result<TimeTz> {
    let today = super::datetime::now_local_tm().0;
    let day = super::datetime::date2j(today.year, today.mon, today.mday) - super::datetime::POSTGRES_EPOCH_JDATE;
    let local = day * USECS_PER_DAY + t;
    let east = ((local - super::tz::utc_of(local)?) / USECS_PER_SEC) as i32;
    Ok(TimeTz { time: t, zone: -east })
}

fn out_of_range_for_timestamp() -> PgError {
    PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "date out of range for timestamp")
}

/// Midnight of `date` as a timestamp (`date2timestamp`): infinities stay infinite.
fn date_midnight(date: i32) -> Result<i64> {
    match date {
        i32::MIN => Ok(i64::MIN),
        i32::MAX => Ok(i64::MAX),
        d => i64::from(d)
            .checked_mul(USECS_PER_DAY)
            .filter(|&t| super::datetime::is_valid_timestamp(t))
            .ok_or_else(out_of_range_for_timestamp),
    }
}

/// `datetime_timestamp`: `date + time`.
pub fn date_plus_time(date: i32, t: i64) -> Result<i64> {
    let midnight = date_midnight(date)?;
    if midnight == i64::MIN || midnight == i64::MAX {
        return Ok(midnight);
    }
    let r = midnight + t;
    if super::datetime::is_valid_timestamp(r) {
        Ok(r)
    } else {
        Err(PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "timestamp out of range"))
    }
}

/// `datetimetz_timestamptz`: `date + timetz`, the instant the zone's clocks read it.
pub fn date_plus_timetz(date: i32, t: &TimeTz) -> Result<i64> {
    let midnight = date_midnight(date)?;
    if midnight == i64::MIN || midnight == i64::MAX {
        return Ok(midnight);
    }
    let r = midnight + t.time + i64::from(t.zone) * USECS_PER_SEC;
    if super::datetime::is_valid_timestamp(r) {
        Ok(r)
    } else {
        Err(out_of_range_for_timestamp())
    }
}

/// The fields of a time (hour, minute, second, microsecond), as `time2tm` (24:00:00 is hour 24).
pub fn fields(t: i64) -> (i32, i32, i32, i32) {
    dt2time(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: i64) -> String {
        let mut out = Vec::new();
        format_time(t, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn input_output_and_rounding() {
        let p = |s: &str| parse_time(s, -1).map(text).unwrap_or_else(|e| e.message.clone());
        assert_eq!(p("10:30"), "10:30:00");
        assert_eq!(p("1:2:3.25 pm"), "13:02:03.25");
        assert_eq!(p("24:00"), "24:00:00");
        assert_eq!(p("2024-01-01 04:05:06+02"), "04:05:06");
        assert_eq!(p("040506"), "04:05:06");
        assert_eq!(p("allballs"), "00:00:00");
        assert_eq!(p("24:00:01"), "date/time field value out of range: \"24:00:01\"");
        assert_eq!(p("abc"), "invalid input syntax for type time: \"abc\"");
        assert_eq!(parse_time("23:59:59.9", 0).map(text).unwrap(), "24:00:00");
        let tz = parse_timetz("10:00:00.5-03:30", -1).unwrap();
        assert_eq!(tz, TimeTz { time: 36_000_500_000, zone: 12_600 });
        let mut out = Vec::new();
        tz.write_text(&mut out);
        assert_eq!(out, b"10:00:00.5-03:30");
    }

    #[test]
    fn arithmetic_wraps_into_the_day() {
        let iv = |micros: i64| Interval { months: 1, days: 2, micros };
        assert_eq!(plus_interval(23 * 3_600_000_000, &iv(2 * 3_600_000_000)), 3_600_000_000);
        assert_eq!(minus_interval(3_600_000_000, &iv(2 * 3_600_000_000)), 23 * 3_600_000_000);
        assert_eq!(of_interval(&iv(-3_600_000_000)), 23 * 3_600_000_000);
        assert_eq!(of_timestamp(i64::MAX), None);
        assert_eq!(date_plus_time(i32::MAX, 5).ok(), Some(i64::MAX));
        assert_eq!(date_plus_time(1, 5).ok(), Some(USECS_PER_DAY + 5));
    }

    #[test]
    fn receive_checks_ranges() {
        let mut w = Vec::new();
        w.extend_from_slice(&(USECS_PER_DAY + 1).to_be_bytes());
        w.extend_from_slice(&0i32.to_be_bytes());
        assert_eq!(TimeTz::recv(&w, -1).unwrap_err().code, "22007");
        let mut w = Vec::new();
        w.extend_from_slice(&0i64.to_be_bytes());
        w.extend_from_slice(&TZDISP_LIMIT.to_be_bytes());
        assert_eq!(TimeTz::recv(&w, -1).unwrap_err().code, "22009");
    }
}

//! The general date/time input decoder: PostgreSQL 15's `DecodeDateTime` over the fields
//! of [`super::dt_lex`], for DateStyle `ISO, MDY` (a timestamptz without a zone in its text is
//! the session time zone's wall clock, applied by the caller).
//!
//! Also `DecodeTimeOnly` ([`decode_time_only`]: `time` and `timetz` input).
//!
//! Everything happens in fixed stack buffers (no heap allocation on success, but for a zone
//! name). Time zones in the input are validated and then ignored, as `date` and `timestamp
//! without time zone` do. A full zone name (`America/New_York`, `Japan`) is looked up as
//! `SET TIME ZONE` looks it up (`types::tz::Zone::named`) and its offset taken when its clocks
//! read the input's date and time; POSIX zone strings with a daylight-saving part are refused
//! (0A000), as there.

use super::datetime::{date2j, dt2time, j2date, now_local_tm, USECS_PER_DAY};
use super::dt_fields::{
    decode_date, decode_number, decode_number_field, decode_time, decode_timezone, parse_fraction, parse_fractional_second, strtol,
    time_overflows, validate_date, DtResult, NumberCtx, ADBC, ALL_SECS, AMPM, DATE_M, DAY, DOW, DTZ, DTZMOD, DYNTZ, HOUR, MINUTE, MONTH,
    RESERV, SECOND, TIME_M, TZ, YEAR,
};
use super::dt_lex::{Fields, Kind};
use super::dt_tokens::{keyword, zone_abbrev, Keyword, Prefix, Reserved, ZoneAbbrev};

pub(crate) use super::dt_fields::{DtErr, Tm};
pub(crate) use super::dt_lex::{DATE_WORKBUF, TIMESTAMP_WORKBUF};

/// What the input denotes (`dtype`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum DType {
    #[default]
    Date,
    Epoch,
    Late,
    Early,
}

/// Parses a date/time string with a `workbuf` of `buflen` bytes, as `date_in` (129) or
/// `timestamp_in` (153) do.
pub(crate) fn decode(s: &[u8], buflen: usize) -> DtResult<(DType, Tm)> {
    let fields = Fields::parse(s, buflen)?;
    Decoder::default().run(&fields)
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Meridian {
    #[default]
    Hr24,
    Am,
    Pm,
}

/// `DecodeDateTime`'s state while it walks the fields.
#[derive(Default)]
struct Decoder {
    /// Fields seen so far (`DTK_M` bits).
    fmask: u32,
    /// A unit label waiting for its number (`ptype`).
    ptype: Option<Prefix>,
    mer: Meridian,
    have_text_month: bool,
    isjulian: bool,
    is2digits: bool,
    bc: bool,
    dynamic_tz: bool,
    dtype: DType,
    tm: Tm,
    /// A full zone name in the input (`America/New_York`), resolved once the date is known.
    named: Option<super::tz::Zone>,
}

/// Parses a time of day with an optional date and zone, as `time_in` and `timetz_in` do
/// (PostgreSQL 15's `DecodeTimeOnly`). The result's `tz` is the zone's offset east of UTC,
/// in seconds: the input's, else (`session_zone`: timetz) the session zone's on the input's
/// date (today's without one); `time_in` drops the zone, so it does not ask for the session's.
pub(crate) fn decode_time_only(s: &[u8], session_zone: bool) -> DtResult<Tm> {
    let fields = Fields::parse(s, DATE_WORKBUF)?;
    Decoder::default().run_time_only(&fields, session_zone)
}

impl Decoder {
    /// `DecodeTimeOnly`'s walk over the fields.
    fn run_time_only(mut self, f: &Fields, session_zone: bool) -> DtResult<Tm> {
        let n = f.count;
        for i in 0..n {
            let t = f.text(i);
            let tmask = match f.kind(i) {
                // A date only first, and only with a time after it or a date last.
                Kind::Date if i == 0 && n >= 2 && (f.kind(n - 1) == Kind::Date || f.kind(1) == Kind::Time) => {
                    decode_date(t, self.fmask, &mut self.is2digits, &mut self.tm)?
                }
                Kind::Date if t.first().is_some_and(u8::is_ascii_digit) => {
                    // A run-together time with its zone (`040506-08`).
                    if self.fmask & TIME_M == TIME_M {
                        return Err(DtErr::BadFormat);
                    }
                    let dash = t.iter().position(|&c| c == b'-').ok_or(DtErr::BadFormat)?;
                    self.tm.tz = Some(decode_timezone(&t[dash..])?);
                    self.run_together(&t[..dash], self.fmask | DATE_M)? | TZ
                }
                Kind::Date => {
                    self.named = Some(named_zone(t, true)?);
                    TZ
                }
                Kind::Time => {
                    decode_time(t, &mut self.tm)?;
                    TIME_M
                }
                Kind::Tz => {
                    self.tm.tz = Some(decode_timezone(t)?);
                    TZ
                }
                Kind::Number => match self.ptype.take() {
                    Some(p) => {
                        let tmask = self.prefixed_number(p, t)?;
                        self.dtype = DType::Date;
                        tmask
                    }
                    None => {
                        let dot = t.iter().position(|&c| c == b'.');
                        match dot {
                            Some(_) if i == 0 && n >= 2 && f.kind(n - 1) == Kind::Date => {
                                decode_date(t, self.fmask, &mut self.is2digits, &mut self.tm)?
                            }
                            Some(d) if d > 2 => self.run_together(t, self.fmask | DATE_M)?,
                            Some(_) => return Err(DtErr::BadFormat),
                            None if t.len() > 4 => self.run_together(t, self.fmask | DATE_M)?,
                            None => {
                                let ctx = NumberCtx { have_text_month: false, fmask: self.fmask | DATE_M };
                                let mut fsec = self.tm.fsec;
                                let r = decode_number(t, ctx, &mut self.tm, &mut fsec, &mut self.is2digits);
                                self.tm.fsec = fsec;
                                r?
                            }
                        }
                    }
                },
                Kind::String | Kind::Special => {
                    let next = (i + 1 < n).then(|| f.kind(i + 1));
                    match self.time_word(t, next)? {
                        Some(mask) => mask,
                        None => continue,
                    }
                }
            };
            if tmask & self.fmask != 0 {
                return Err(DtErr::BadFormat);
            }
            self.fmask |= tmask;
        }
        self.finish_time_only(session_zone)
    }

    /// `DecodeTimeOnly`'s words: zone abbreviations, then `datetktbl`, then a zone name.
    fn time_word(&mut self, t: &[u8], next: Option<Kind>) -> DtResult<Option<u32>> {
        if zone_abbrev(t).is_some() {
            return self.word_field(t, next);
        }
        let Some(kw) = keyword(t) else {
            self.named = Some(named_zone(t, false)?);
            return Ok(Some(TZ));
        };
        Ok(Some(match kw {
            Keyword::Reserved(Reserved::Now) => {
                super::tz::note_now_word();
                let now = now_local_tm().0;
                (self.tm.hour, self.tm.min, self.tm.sec, self.tm.fsec) = (now.hour, now.min, now.sec, now.fsec);
                self.dtype = DType::Date;
                TIME_M
            }
            Keyword::Reserved(Reserved::Zulu) => {
                (self.tm.hour, self.tm.min, self.tm.sec) = (0, 0, 0);
                self.tm.tz = Some(0);
                self.dtype = DType::Date;
                TIME_M | TZ
            }
            Keyword::Reserved(_) | Keyword::Month(_) | Keyword::DayOfWeek => return Err(DtErr::BadFormat),
            Keyword::IsoTime => {
                if !matches!(next, Some(Kind::Number | Kind::Time | Kind::Date)) {
                    return Err(DtErr::BadFormat);
                }
                self.ptype = Some(Prefix::Time);
                0
            }
            Keyword::Ignore | Keyword::Am | Keyword::Pm | Keyword::Ad | Keyword::Bc | Keyword::Units(_) | Keyword::DstModifier => {
                return self.word_field(t, next)
            }
        }))
    }

    /// The time with the input's date, or today's when it has none (a zone's offset is read
    /// at that date); a date given only in part is a bad format.
    fn dated(&self) -> DtResult<Tm> {
        let mut at = self.tm;
        if self.fmask & DATE_M == 0 {
            let today = now_local_tm().0;
            (at.year, at.mon, at.mday) = (today.year, today.mon, today.mday);
        } else if self.fmask & DATE_M != DATE_M {
            return Err(DtErr::BadFormat);
        }
        Ok(at)
    }

    /// `DecodeTimeOnly`'s final checks, then the zone's offset.
    fn finish_time_only(mut self, session_zone: bool) -> DtResult<Tm> {
        validate_date(self.fmask, self.isjulian, self.is2digits, self.bc, &mut self.tm)?;
        if self.mer != Meridian::Hr24 && self.tm.hour > 12 {
            return Err(DtErr::FieldOverflow);
        }
        match self.mer {
            Meridian::Am if self.tm.hour == 12 => self.tm.hour = 0,
            Meridian::Pm if self.tm.hour != 12 => self.tm.hour += 12,
            _ => {}
        }
        if time_overflows(&self.tm) {
            return Err(DtErr::FieldOverflow);
        }
        if self.fmask & TIME_M != TIME_M {
            return Err(DtErr::BadFormat);
        }
        let dst_modifier = self.fmask & DTZMOD != 0;
        if let Some(zone) = self.named.take() {
            if dst_modifier {
                return Err(DtErr::BadFormat);
            }
            if self.dynamic_tz {
                // A date-dependent abbreviation: its zone's on the input's date, today's without
                // one; one its zone did not use then is left to the caller (`tz_abbrev`).
                let at = self.dated()?;
                match zone_offset_at(&zone, &at) {
                    Ok(east) => self.tm.tz = Some(east),
                    Err(_) => self.tm.tz_abbrev = true,
                }
                return Ok(self.tm);
            }
            let east = match zone.fixed_offset() {
                Some(east) => east,
                None if self.fmask & DATE_M != DATE_M => return Err(DtErr::BadFormat),
                None => zone_offset_at(&zone, &self.tm)?,
            };
            self.tm.tz = Some(east);
        } else if self.dynamic_tz {
            // A date-dependent abbreviation (MSK): refused by the caller (`tz_abbrev`).
            if dst_modifier || (self.fmask & DATE_M != 0 && self.fmask & DATE_M != DATE_M) {
                return Err(DtErr::BadFormat);
            }
        } else if self.fmask & TZ == 0 {
            if dst_modifier {
                return Err(DtErr::BadFormat);
            }
            let at = self.dated()?;
            if session_zone {
                self.tm.tz = Some(super::tz::offset_of_text_local(local_timestamp(&at)).map_err(refused)?);
            }
        }
        Ok(self.tm)
    }

    fn run(mut self, f: &Fields) -> DtResult<(DType, Tm)> {
        for i in 0..f.count {
            let t = f.text(i);
            let tmask = match f.kind(i) {
                Kind::Date => self.date_field(t)?,
                Kind::Time => self.time_field(t)?,
                Kind::Tz => {
                    self.tm.tz = Some(decode_timezone(t)?);
                    TZ
                }
                Kind::Number => self.number_field(t)?,
                Kind::String | Kind::Special => {
                    let next = (i + 1 < f.count).then(|| f.kind(i + 1));
                    match self.word_field(t, next)? {
                        Some(mask) => mask,
                        None => continue,
                    }
                }
            };
            if tmask & self.fmask != 0 {
                return Err(DtErr::BadFormat);
            }
            self.fmask |= tmask;
        }
        self.finish()
    }

    /// Final checks. As in PostgreSQL 15, the fields are validated even when a special
    /// value (`infinity`, `epoch`) decides the result, but completeness only matters for
    /// an ordinary date.
    fn finish(mut self) -> DtResult<(DType, Tm)> {
        validate_date(self.fmask, self.isjulian, self.is2digits, self.bc, &mut self.tm)?;
        if self.mer != Meridian::Hr24 && self.tm.hour > 12 {
            return Err(DtErr::FieldOverflow);
        }
        match self.mer {
            Meridian::Am if self.tm.hour == 12 => self.tm.hour = 0,
            Meridian::Pm if self.tm.hour != 12 => self.tm.hour += 12,
            _ => {}
        }
        if self.dtype != DType::Date {
            return Ok((self.dtype, self.tm));
        }
        // Time without a date is PostgreSQL's "return 1", which date_in and timestamp_in
        // report as bad format, like any other incomplete input.
        if self.fmask & DATE_M != DATE_M {
            return Err(DtErr::BadFormat);
        }
        let dst_modifier = self.fmask & DTZMOD != 0;
        if let Some(zone) = self.named.take() {
            // The zone's offset when its clocks read the input (`DetermineTimeZoneOffset`).
            if dst_modifier {
                return Err(DtErr::BadFormat);
            }
            match zone_offset_at(&zone, &self.tm) {
                Ok(east) => self.tm.tz = Some(east),
                // A date-dependent abbreviation its zone did not use then: left to the caller
                // (`tz_abbrev`), which only timestamptz needs.
                Err(_) if self.dynamic_tz => self.tm.tz_abbrev = true,
                Err(e) => return Err(e),
            }
            return Ok((self.dtype, self.tm));
        }
        if dst_modifier && (self.dynamic_tz || self.fmask & TZ == 0) {
            return Err(DtErr::BadFormat);
        }
        Ok((self.dtype, self.tm))
    }

    /// `DTK_DATE` fields: a date, or (after month and day, or a unit prefix) a run-together
    /// time with a zone, or a zone name.
    fn date_field(&mut self, t: &[u8]) -> DtResult<u32> {
        if self.ptype == Some(Prefix::Julian) {
            let n = strtol(t);
            if n.overflow || n.value < 0 || n.value > i64::from(i32::MAX) {
                return Err(DtErr::FieldOverflow);
            }
            self.set_julian_day(n.value as i32);
            self.tm.tz = Some(decode_timezone(&t[n.end..])?);
            self.ptype = None;
            return Ok(DATE_M | TIME_M | TZ);
        }
        let have_month_day = self.fmask & (MONTH | DAY) == MONTH | DAY;
        if self.ptype.is_none() && !have_month_day {
            return decode_date(t, self.fmask, &mut self.is2digits, &mut self.tm);
        }
        if !(t.first().is_some_and(u8::is_ascii_digit) || self.ptype.is_some()) {
            // A zone name (`America/New_York`), resolved once the date is known.
            self.named = Some(named_zone(t, true)?);
            return Ok(TZ);
        }
        if self.ptype.take().is_some_and(|p| p != Prefix::Time) {
            return Err(DtErr::BadFormat);
        }
        if self.fmask & TIME_M == TIME_M {
            return Err(DtErr::BadFormat);
        }
        let dash = t.iter().position(|&c| c == b'-').ok_or(DtErr::BadFormat)?;
        self.tm.tz = Some(decode_timezone(&t[dash..])?);
        let tmask = self.run_together(&t[..dash], self.fmask)?;
        Ok(tmask | TZ)
    }

    fn time_field(&mut self, t: &[u8]) -> DtResult<u32> {
        if self.ptype.take().is_some_and(|p| p != Prefix::Time) {
            return Err(DtErr::BadFormat);
        }
        decode_time(t, &mut self.tm)?;
        if time_overflows(&self.tm) {
            return Err(DtErr::FieldOverflow);
        }
        Ok(TIME_M)
    }

    fn number_field(&mut self, t: &[u8]) -> DtResult<u32> {
        match self.ptype.take() {
            Some(p) => {
                let tmask = self.prefixed_number(p, t)?;
                self.dtype = DType::Date;
                Ok(tmask)
            }
            None => self.plain_number(t),
        }
    }

    /// A number after a unit prefix (`y2001`, `j2451545.5`, ISO `T040506`).
    fn prefixed_number(&mut self, p: Prefix, t: &[u8]) -> DtResult<u32> {
        let n = strtol(t);
        if n.overflow || i32::try_from(n.value).is_err() {
            return Err(DtErr::FieldOverflow);
        }
        let val = n.value as i32;
        let rest = &t[n.end..];
        let has_fraction = rest.first() == Some(&b'.');
        if has_fraction && !matches!(p, Prefix::Julian | Prefix::Time | Prefix::Second) {
            return Err(DtErr::BadFormat);
        }
        if !has_fraction && !rest.is_empty() {
            return Err(DtErr::BadFormat);
        }
        let tm = &mut self.tm;
        match p {
            Prefix::Year => tm.year = val,
            Prefix::Month if self.fmask & MONTH != 0 && self.fmask & HOUR != 0 => {
                tm.min = val;
                return Ok(MINUTE);
            }
            Prefix::Month => tm.mon = val,
            Prefix::Day => tm.mday = val,
            Prefix::Hour => tm.hour = val,
            Prefix::Minute => tm.min = val,
            Prefix::Second => {
                tm.sec = val;
                if has_fraction {
                    tm.fsec = parse_fractional_second(rest)?;
                    return Ok(ALL_SECS);
                }
            }
            Prefix::Julian => return self.julian_number(val, rest),
            Prefix::Time => {
                let tmask = self.run_together(t, self.fmask | DATE_M)?;
                return if tmask == TIME_M { Ok(tmask) } else { Err(DtErr::BadFormat) };
            }
            Prefix::Other => return Err(DtErr::BadFormat),
        }
        Ok(match p {
            Prefix::Year => YEAR,
            Prefix::Month => MONTH,
            Prefix::Day => DAY,
            Prefix::Hour => HOUR,
            Prefix::Minute => MINUTE,
            _ => SECOND,
        })
    }

    /// `j2451545[.5]`: a Julian day, optionally with a fraction of a day.
    fn julian_number(&mut self, val: i32, rest: &[u8]) -> DtResult<u32> {
        if val < 0 {
            return Err(DtErr::FieldOverflow);
        }
        self.set_julian_day(val);
        if rest.is_empty() {
            return Ok(DATE_M);
        }
        let frac = parse_fraction(rest)?;
        // The (double) microseconds are truncated to int64 on the way into dt2time.
        let tm = &mut self.tm;
        (tm.hour, tm.min, tm.sec, tm.fsec) = dt2time((frac * USECS_PER_DAY as f64) as i64);
        Ok(DATE_M | TIME_M)
    }

    fn set_julian_day(&mut self, jd: i32) {
        let (y, m, d) = j2date(jd);
        self.tm.year = y;
        self.tm.mon = m;
        self.tm.mday = d;
        self.isjulian = true;
    }

    /// An unlabeled number: part of a date, a run-together date or time, or a year.
    fn plain_number(&mut self, t: &[u8]) -> DtResult<u32> {
        let dot = t.iter().position(|&c| c == b'.');
        match dot {
            Some(_) if self.fmask & DATE_M == 0 => decode_date(t, self.fmask, &mut self.is2digits, &mut self.tm),
            Some(d) if d > 2 => self.run_together(t, self.fmask),
            _ if t.len() >= 6 && (self.fmask & DATE_M == 0 || self.fmask & TIME_M == 0) => self.run_together(t, self.fmask),
            _ => self.bare_number(t),
        }
    }

    /// `DecodeNumber` on this decoder's state.
    fn bare_number(&mut self, t: &[u8]) -> DtResult<u32> {
        let ctx = NumberCtx { have_text_month: self.have_text_month, fmask: self.fmask };
        let mut fsec = self.tm.fsec;
        let r = decode_number(t, ctx, &mut self.tm, &mut fsec, &mut self.is2digits);
        self.tm.fsec = fsec;
        r
    }

    /// `DecodeNumberField` on this decoder's state.
    fn run_together(&mut self, t: &[u8], fmask: u32) -> DtResult<u32> {
        let mut fsec = self.tm.fsec;
        let r = decode_number_field(t, fmask, &mut self.tm, &mut fsec, &mut self.is2digits);
        self.tm.fsec = fsec;
        r
    }

    /// Words: zone abbreviations first, then `datetktbl`. `Ok(None)` means "ignore".
    fn word_field(&mut self, t: &[u8], next: Option<Kind>) -> DtResult<Option<u32>> {
        if let Some(z) = zone_abbrev(t) {
            // A fixed abbreviation is its offset (`EST` -05, `CEST` +02); one whose offset
            // depends on the date (`MSK`) is its zone's at the input's date, resolved at the end
            // (`DetermineTimeZoneAbbrevOffset`); one heapstore cannot resolve is refused by the
            // caller (`tz_abbrev`).
            match super::tz::abbreviation_offset(&t.to_ascii_lowercase()) {
                Some(east) => self.tm.tz = Some(east),
                None => match super::tz::Zone::named(&String::from_utf8_lossy(t)) {
                    Ok(z @ super::tz::Zone::Dynamic(..)) => self.named = Some(z),
                    _ => self.tm.tz_abbrev = true,
                },
            }
            return Ok(Some(match z {
                ZoneAbbrev::Standard => TZ,
                ZoneAbbrev::Daylight => DTZ | TZ,
                ZoneAbbrev::Dynamic => {
                    self.dynamic_tz = true;
                    DYNTZ | TZ
                }
            }));
        }
        let Some(kw) = keyword(t) else {
            // An all-letters zone name (`Japan`, `UTC`).
            self.named = Some(named_zone(t, false)?);
            return Ok(Some(TZ));
        };
        Ok(Some(match kw {
            Keyword::Ignore => return Ok(None),
            Keyword::Reserved(r) => self.reserved(r),
            Keyword::Month(v) => self.text_month(v),
            // `DST` after a zone moves it an hour east (PostgreSQL's DTZMOD); a zone after it
            // replaces it.
            Keyword::DstModifier => {
                if let Some(east) = self.tm.tz {
                    self.tm.tz = Some(east + 3600);
                }
                DTZMOD | DTZ
            }
            Keyword::Am => {
                self.mer = Meridian::Am;
                AMPM
            }
            Keyword::Pm => {
                self.mer = Meridian::Pm;
                AMPM
            }
            Keyword::Ad | Keyword::Bc => {
                self.bc = kw == Keyword::Bc;
                ADBC
            }
            Keyword::DayOfWeek => DOW,
            Keyword::Units(p) => {
                self.ptype = Some(p);
                0
            }
            Keyword::IsoTime => {
                let next_ok = matches!(next, Some(Kind::Number | Kind::Time | Kind::Date));
                if self.fmask & DATE_M != DATE_M || !next_ok {
                    return Err(DtErr::BadFormat);
                }
                self.ptype = Some(Prefix::Time);
                0
            }
        }))
    }

    /// Special words; `now`, `today`, ... use the current time on the session's clocks
    /// (`now` with the zone's offset then, `allballs` with UTC's). `epoch`,
    /// `infinity` and `-infinity` only claim their own mask bit (PostgreSQL 15), so other
    /// fields may accompany them and are still checked.
    fn reserved(&mut self, r: Reserved) -> u32 {
        self.dtype = DType::Date;
        match r {
            Reserved::Epoch => self.dtype = DType::Epoch,
            Reserved::Late => self.dtype = DType::Late,
            Reserved::Early => self.dtype = DType::Early,
            Reserved::Now => {
                super::tz::note_now_word();
                let (now, east) = now_local_tm();
                self.tm = Tm { yday: self.tm.yday, tz: Some(east), ..now };
                return DATE_M | TIME_M | TZ;
            }
            Reserved::Zulu => {
                (self.tm.hour, self.tm.min, self.tm.sec) = (0, 0, 0);
                self.tm.tz = Some(0);
                return TIME_M | TZ;
            }
            Reserved::Yesterday => return self.relative_day(-1),
            Reserved::Today => return self.relative_day(0),
            Reserved::Tomorrow => return self.relative_day(1),
        }
        RESERV
    }

    /// `today` plus `offset` days (the time fields are left alone).
    fn relative_day(&mut self, offset: i64) -> u32 {
        super::tz::note_now_word();
        let now = now_local_tm().0;
        let jd = date2j(now.year, now.mon, now.mday) + offset;
        (self.tm.year, self.tm.mon, self.tm.mday) = j2date(jd as i32);
        DATE_M
    }

    /// A month name; an earlier bare number taken as the month becomes the day.
    fn text_month(&mut self, v: i32) -> u32 {
        let mut tmask = MONTH;
        let numeric_month = self.fmask & MONTH != 0 && !self.have_text_month;
        if numeric_month && self.fmask & DAY == 0 && (1..=31).contains(&self.tm.mon) {
            self.tm.mday = self.tm.mon;
            tmask = DAY;
        }
        self.have_text_month = true;
        self.tm.mon = v;
        tmask
    }
}

/// The wall-clock time of `tm`'s fields as a timestamp (microseconds since 2000-01-01).
fn local_timestamp(tm: &Tm) -> i64 {
    let date = date2j(tm.year, tm.mon, tm.mday) - super::datetime::POSTGRES_EPOCH_JDATE;
    let time = ((i64::from(tm.hour) * 60 + i64::from(tm.min)) * 60 + i64::from(tm.sec)) * 1_000_000 + i64::from(tm.fsec);
    date.saturating_mul(USECS_PER_DAY).saturating_add(time)
}

/// `DetermineTimeZoneOffset`: zone's offset east of UTC when its clocks read `tm`.
fn zone_offset_at(zone: &super::tz::Zone, tm: &Tm) -> DtResult<i32> {
    let local = local_timestamp(tm);
    let utc = zone.from_local(local).map_err(refused)?;
    Ok(((local - utc) / 1_000_000) as i32)
}

/// A full zone name in date/time input (`pg_tzset`): in a field with a `/` not found, 22023
/// (`time zone "x" not recognized`); as a word, bad format; one heapstore cannot use, 0A000.
fn named_zone(t: &[u8], slashed: bool) -> DtResult<super::tz::Zone> {
    let name = String::from_utf8_lossy(t);
    match super::tz::Zone::named(&name) {
        Ok(z) => Ok(z),
        Err(e) if e.code == crate::error::sqlstate::FEATURE_NOT_SUPPORTED => Err(refused(e)),
        Err(_) if slashed => Err(DtErr::TzNotRecognized(name.into_owned())),
        Err(_) => Err(DtErr::BadFormat),
    }
}

fn refused(e: crate::error::PgError) -> DtErr {
    DtErr::Refused(e.code, e.message.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_common_forms() {
        let d = |s: &str| decode(s.as_bytes(), TIMESTAMP_WORKBUF).map(|(_, tm)| tm);
        let tm = d("Jan 2 2000 04:05:06.5 pm").unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!((tm.year, tm.mon, tm.mday, tm.hour, tm.fsec), (2000, 1, 2, 16, 500_000));
        assert_eq!(d("2000-02-30"), Err(DtErr::FieldOverflow));
        assert_eq!(d("99-01-01"), Err(DtErr::MdFieldOverflow));
        assert_eq!(d("12:00"), Err(DtErr::BadFormat));
        assert_eq!(d("2000-01-01 12:00+99"), Err(DtErr::TzDispOverflow));
        let special = decode(b"infinity 2000", TIMESTAMP_WORKBUF).map(|(t, _)| t);
        assert_eq!(special, Ok(DType::Late));
    }
}

//! Time zones for `AT TIME ZONE` and `timezone(zone, timestamp)`: the zone a name or an
//! interval gives, and the conversions between an instant (timestamptz) and the wall-clock
//! time (timestamp) there, as PostgreSQL's `timestamptz_zone` / `timestamp_zone` compute them.
//!
//! A zone named by text is looked up as PostgreSQL does:
//! 1. an abbreviation of the default `timezone_abbreviations` set (`Default`), any case:
//!    most are a fixed offset (`EST` is −05:00 all year, `CET` +01:00 also in summer); a few
//!    stand for a zone's local abbreviation (`MSK`, Europe/Moscow) and are used where that
//!    zone used that abbreviation at that time (elsewhere refused, 0A000);
//! 2. an IANA zone name, any case (`America/New_York`), from the system's time zone
//!    database (`/usr/share/zoneinfo`, or `$TZDIR`), else from the copy built into heapstore
//!    (jiff's bundled database) where the system has none;
//! 3. a POSIX offset without daylight-saving part: an optional name, then
//!    `[+-]h[h][h][:mm[:ss]]` (hours below 168), **west** of Greenwich when positive
//!    (`'+05'` and `'UTC+5'` are five hours *behind* UTC), as POSIX and PostgreSQL read it.
//!
//! Anything else is 22023 `time zone "..." not recognized`, except a POSIX string with a
//! daylight-saving part or other forms PostgreSQL's parser also takes (which heapstore does
//! not read), refused with 0A000. An interval zone is an offset east of UTC
//! (`INTERVAL '-08:00'`), without months or days (22023).
//!
//! Local times in a gap (a spring-forward hour) take the offset from before the transition;
//! local times in a fold (a fall-back hour) the offset from after it, as PostgreSQL's
//! `DetermineTimeZoneOffset`. A named zone's rules are read from the database for the years
//! 1 to 9999 (UTC); past 9999 they are its rules 400 years earlier (the rule after its last
//! transition, such as "last Sunday of March", repeats with the Gregorian calendar, whose
//! weekdays repeat every 400 years); before year 1 a named zone is refused (0A000), a fixed
//! offset works over the whole range.
//!
//! ## The session's time zone (`TimeZone`)
//! [`setting`] reads a `TimeZone` value as PostgreSQL's `check_timezone`: a plain number is
//! hours **east** of UTC (`-7`, `5.5`), shown as the POSIX name `<-07>+07`; anything else is an
//! IANA zone name (any case, shown in the database's spelling) or a POSIX offset (`UTC+5`,
//! five hours west). Zone abbreviations are no `TimeZone` (`PST`), as in PostgreSQL.
//!
//! The zone in force is per thread ([`set_session`], [`scope`]), as PostgreSQL's
//! `session_timezone` is per backend. Invariant: every thread that converts between an instant
//! and the wall clock for a session (parsing or printing a timestamptz, casts between
//! timestamptz and timestamp or date, date and time fields and arithmetic of a timestamptz)
//! has that session's zone installed: the session installs it on its thread whenever its
//! settings change and at each statement (`Session::mark_statement_start`, and the library's
//! `Session::query`), and threads a statement starts (parallel COPY's workers) enter a
//! [`scope`] with it. `None` is UTC. The same holds for the transaction's start, which `'now'`
//! in input text reads.
//!
//! ## Stored definitions
//! PostgreSQL turns a literal into a timestamptz once, when a DEFAULT, CHECK constraint or
//! view is created, in the creator's zone. heapstore keeps those definitions as SQL text and
//! binds them again at each use, so it reads their literals without an offset in UTC
//! ([`stored_definition`]), whatever the reading session's zone; and where such a literal
//! would mean another instant to PostgreSQL (a definition made in a session outside UTC), it
//! refuses the definition with 0A000 ([`check_stored_definition`]). Everything else in them
//! (casts of columns, `CURRENT_DATE`) follows the session's zone as it runs.

use super::datetime::is_valid_timestamp;
use super::interval::Interval;
use crate::error::{sqlstate, PgError, Result};

/// Microseconds from 1970-01-01 to 2000-01-01 (heapstore's timestamps count from the latter).
const UNIX_TO_PG_US: i64 = 946_684_800_000_000;

/// An abbreviation of the default set.
#[derive(Clone, Copy)]
enum Abbrev {
    /// Seconds east of UTC.
    Fixed(i32),
    /// The zone whose local abbreviation it is.
    Dynamic(&'static str),
}

/// The default `timezone_abbreviations` set, lower case, sorted.
const ABBREVS: &[(&str, Abbrev)] = &[
    ("acdt", Abbrev::Fixed(37800)),
    ("acsst", Abbrev::Fixed(37800)),
    ("acst", Abbrev::Fixed(34200)),
    ("act", Abbrev::Fixed(-18000)),
    ("acwst", Abbrev::Fixed(31500)),
    ("adt", Abbrev::Fixed(-10800)),
    ("aedt", Abbrev::Fixed(39600)),
    ("aesst", Abbrev::Fixed(39600)),
    ("aest", Abbrev::Fixed(36000)),
    ("aft", Abbrev::Fixed(16200)),
    ("akdt", Abbrev::Fixed(-28800)),
    ("akst", Abbrev::Fixed(-32400)),
    ("almst", Abbrev::Fixed(25200)),
    ("almt", Abbrev::Fixed(21600)),
    ("amst", Abbrev::Dynamic("Asia/Yerevan")),
    ("amt", Abbrev::Fixed(-14400)),
    ("anast", Abbrev::Dynamic("Asia/Anadyr")),
    ("anat", Abbrev::Dynamic("Asia/Anadyr")),
    ("arst", Abbrev::Dynamic("America/Argentina/Buenos_Aires")),
    ("art", Abbrev::Dynamic("America/Argentina/Buenos_Aires")),
    ("ast", Abbrev::Fixed(-14400)),
    ("awsst", Abbrev::Fixed(32400)),
    ("awst", Abbrev::Fixed(28800)),
    ("azost", Abbrev::Fixed(0)),
    ("azot", Abbrev::Fixed(-3600)),
    ("azst", Abbrev::Dynamic("Asia/Baku")),
    ("azt", Abbrev::Dynamic("Asia/Baku")),
    ("bdst", Abbrev::Fixed(7200)),
    ("bdt", Abbrev::Fixed(21600)),
    ("bnt", Abbrev::Fixed(28800)),
    ("bort", Abbrev::Fixed(28800)),
    ("bot", Abbrev::Fixed(-14400)),
    ("bra", Abbrev::Fixed(-10800)),
    ("brst", Abbrev::Fixed(-7200)),
    ("brt", Abbrev::Fixed(-10800)),
    ("bst", Abbrev::Fixed(3600)),
    ("btt", Abbrev::Fixed(21600)),
    ("cadt", Abbrev::Fixed(37800)),
    ("cast", Abbrev::Fixed(34200)),
    ("cct", Abbrev::Fixed(28800)),
    ("cdt", Abbrev::Fixed(-18000)),
    ("cest", Abbrev::Fixed(7200)),
    ("cet", Abbrev::Fixed(3600)),
    ("cetdst", Abbrev::Fixed(7200)),
    ("chadt", Abbrev::Fixed(49500)),
    ("chast", Abbrev::Fixed(45900)),
    ("chut", Abbrev::Fixed(36000)),
    ("ckt", Abbrev::Dynamic("Pacific/Rarotonga")),
    ("clst", Abbrev::Fixed(-10800)),
    ("clt", Abbrev::Dynamic("America/Santiago")),
    ("cot", Abbrev::Fixed(-18000)),
    ("cst", Abbrev::Fixed(-21600)),
    ("cxt", Abbrev::Fixed(25200)),
    ("davt", Abbrev::Dynamic("Antarctica/Davis")),
    ("ddut", Abbrev::Fixed(36000)),
    ("easst", Abbrev::Dynamic("Pacific/Easter")),
    ("east", Abbrev::Dynamic("Pacific/Easter")),
    ("eat", Abbrev::Fixed(10800)),
    ("edt", Abbrev::Fixed(-14400)),
    ("eest", Abbrev::Fixed(10800)),
    ("eet", Abbrev::Fixed(7200)),
    ("eetdst", Abbrev::Fixed(10800)),
    ("egst", Abbrev::Fixed(0)),
    ("egt", Abbrev::Fixed(-3600)),
    ("est", Abbrev::Fixed(-18000)),
    ("fet", Abbrev::Fixed(10800)),
    ("fjst", Abbrev::Fixed(46800)),
    ("fjt", Abbrev::Fixed(43200)),
    ("fkst", Abbrev::Dynamic("Atlantic/Stanley")),
    ("fkt", Abbrev::Dynamic("Atlantic/Stanley")),
    ("fnst", Abbrev::Fixed(-3600)),
    ("fnt", Abbrev::Fixed(-7200)),
    ("galt", Abbrev::Fixed(-21600)),
    ("gamt", Abbrev::Fixed(-32400)),
    ("gest", Abbrev::Dynamic("Asia/Tbilisi")),
    ("get", Abbrev::Dynamic("Asia/Tbilisi")),
    ("gft", Abbrev::Fixed(-10800)),
    ("gilt", Abbrev::Fixed(43200)),
    ("gmt", Abbrev::Fixed(0)),
    ("gyt", Abbrev::Dynamic("America/Guyana")),
    ("hkt", Abbrev::Fixed(28800)),
    ("hst", Abbrev::Fixed(-36000)),
    ("ict", Abbrev::Fixed(25200)),
    ("idt", Abbrev::Fixed(10800)),
    ("iot", Abbrev::Dynamic("Indian/Chagos")),
    ("irkst", Abbrev::Dynamic("Asia/Irkutsk")),
    ("irkt", Abbrev::Dynamic("Asia/Irkutsk")),
    ("irt", Abbrev::Fixed(12600)),
    ("ist", Abbrev::Fixed(7200)),
    ("jayt", Abbrev::Fixed(32400)),
    ("jst", Abbrev::Fixed(32400)),
    ("kdt", Abbrev::Fixed(36000)),
    ("kgst", Abbrev::Fixed(21600)),
    ("kgt", Abbrev::Dynamic("Asia/Bishkek")),
    ("kost", Abbrev::Dynamic("Pacific/Kosrae")),
    ("krast", Abbrev::Dynamic("Asia/Krasnoyarsk")),
    ("krat", Abbrev::Dynamic("Asia/Krasnoyarsk")),
    ("kst", Abbrev::Fixed(32400)),
    ("lhdt", Abbrev::Dynamic("Australia/Lord_Howe")),
    ("lhst", Abbrev::Fixed(37800)),
    ("ligt", Abbrev::Fixed(36000)),
    ("lint", Abbrev::Dynamic("Pacific/Kiritimati")),
    ("lkt", Abbrev::Dynamic("Asia/Colombo")),
    ("magst", Abbrev::Dynamic("Asia/Magadan")),
    ("magt", Abbrev::Dynamic("Asia/Magadan")),
    ("mart", Abbrev::Fixed(-34200)),
    ("mawt", Abbrev::Dynamic("Antarctica/Mawson")),
    ("mdt", Abbrev::Fixed(-21600)),
    ("mest", Abbrev::Fixed(7200)),
    ("mesz", Abbrev::Fixed(7200)),
    ("met", Abbrev::Fixed(3600)),
    ("metdst", Abbrev::Fixed(7200)),
    ("mez", Abbrev::Fixed(3600)),
    ("mht", Abbrev::Fixed(43200)),
    ("mmt", Abbrev::Fixed(23400)),
    ("mpt", Abbrev::Fixed(36000)),
    ("msd", Abbrev::Fixed(14400)),
    ("msk", Abbrev::Dynamic("Europe/Moscow")),
    ("mst", Abbrev::Fixed(-25200)),
    ("must", Abbrev::Fixed(18000)),
    ("mut", Abbrev::Fixed(14400)),
    ("mvt", Abbrev::Fixed(18000)),
    ("myt", Abbrev::Fixed(28800)),
    ("ndt", Abbrev::Fixed(-9000)),
    ("nft", Abbrev::Fixed(-12600)),
    ("novst", Abbrev::Dynamic("Asia/Novosibirsk")),
    ("novt", Abbrev::Dynamic("Asia/Novosibirsk")),
    ("npt", Abbrev::Fixed(20700)),
    ("nst", Abbrev::Fixed(-12600)),
    ("nut", Abbrev::Dynamic("Pacific/Niue")),
    ("nzdt", Abbrev::Fixed(46800)),
    ("nzst", Abbrev::Fixed(43200)),
    ("nzt", Abbrev::Fixed(43200)),
    ("omsst", Abbrev::Dynamic("Asia/Omsk")),
    ("omst", Abbrev::Dynamic("Asia/Omsk")),
    ("pdt", Abbrev::Fixed(-25200)),
    ("pet", Abbrev::Fixed(-18000)),
    ("petst", Abbrev::Dynamic("Asia/Kamchatka")),
    ("pett", Abbrev::Dynamic("Asia/Kamchatka")),
    ("pgt", Abbrev::Fixed(36000)),
    ("pht", Abbrev::Fixed(28800)),
    ("pkst", Abbrev::Fixed(21600)),
    ("pkt", Abbrev::Fixed(18000)),
    ("pmdt", Abbrev::Fixed(-7200)),
    ("pmst", Abbrev::Fixed(-10800)),
    ("pont", Abbrev::Fixed(39600)),
    ("pst", Abbrev::Fixed(-28800)),
    ("pwt", Abbrev::Fixed(32400)),
    ("pyst", Abbrev::Fixed(-10800)),
    ("pyt", Abbrev::Dynamic("America/Asuncion")),
    ("ret", Abbrev::Fixed(14400)),
    ("sadt", Abbrev::Fixed(37800)),
    ("sast", Abbrev::Fixed(7200)),
    ("sct", Abbrev::Fixed(14400)),
    ("sgt", Abbrev::Dynamic("Asia/Singapore")),
    ("taht", Abbrev::Fixed(-36000)),
    ("tft", Abbrev::Fixed(18000)),
    ("tjt", Abbrev::Fixed(18000)),
    ("tkt", Abbrev::Dynamic("Pacific/Fakaofo")),
    ("tmt", Abbrev::Dynamic("Asia/Ashgabat")),
    ("tot", Abbrev::Fixed(46800)),
    ("trut", Abbrev::Fixed(36000)),
    ("tvt", Abbrev::Fixed(43200)),
    ("uct", Abbrev::Fixed(0)),
    ("ulast", Abbrev::Fixed(32400)),
    ("ulat", Abbrev::Dynamic("Asia/Ulaanbaatar")),
    ("ut", Abbrev::Fixed(0)),
    ("utc", Abbrev::Fixed(0)),
    ("uyst", Abbrev::Fixed(-7200)),
    ("uyt", Abbrev::Fixed(-10800)),
    ("uzst", Abbrev::Fixed(21600)),
    ("uzt", Abbrev::Fixed(18000)),
    ("vet", Abbrev::Dynamic("America/Caracas")),
    ("vlast", Abbrev::Dynamic("Asia/Vladivostok")),
    ("vlat", Abbrev::Dynamic("Asia/Vladivostok")),
    ("volt", Abbrev::Dynamic("Europe/Volgograd")),
    ("vut", Abbrev::Fixed(39600)),
    ("wadt", Abbrev::Fixed(28800)),
    ("wakt", Abbrev::Fixed(43200)),
    ("wast", Abbrev::Fixed(25200)),
    ("wat", Abbrev::Fixed(3600)),
    ("wdt", Abbrev::Fixed(32400)),
    ("wet", Abbrev::Fixed(0)),
    ("wetdst", Abbrev::Fixed(3600)),
    ("wft", Abbrev::Fixed(43200)),
    ("wgst", Abbrev::Fixed(-7200)),
    ("wgt", Abbrev::Fixed(-10800)),
    ("xjt", Abbrev::Fixed(21600)),
    ("yakst", Abbrev::Dynamic("Asia/Yakutsk")),
    ("yakt", Abbrev::Dynamic("Asia/Yakutsk")),
    ("yapt", Abbrev::Fixed(36000)),
    ("yekst", Abbrev::Fixed(21600)),
    ("yekt", Abbrev::Dynamic("Asia/Yekaterinburg")),
    ("z", Abbrev::Fixed(0)),
    ("zulu", Abbrev::Fixed(0)),
];

/// The offset east of UTC, in seconds, of a fixed abbreviation of the default set (lower
/// case: `est`, `cest`, `utc`); None for another word or a dynamic one (`msk`).
pub fn abbreviation_offset(lower: &[u8]) -> Option<i32> {
    let i = ABBREVS.binary_search_by(|(a, _)| a.as_bytes().cmp(lower)).ok()?;
    match ABBREVS[i].1 {
        Abbrev::Fixed(s) => Some(s),
        Abbrev::Dynamic(_) => None,
    }
}

/// A time zone resolved from a name or an interval.
#[derive(Clone, Debug)]
pub enum Zone {
    /// Seconds east of UTC.
    Fixed(i32),
    Named(jiff::tz::TimeZone),
    /// A dynamic abbreviation (lower case) and its zone.
    Dynamic(&'static str, jiff::tz::TimeZone),
}

fn not_recognized(name: &str) -> PgError {
    PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("time zone \"{name}\" not recognized"))
}

impl Zone {
    /// The zone `name` names (module doc for the rules).
    pub fn named(name: &str) -> Result<Zone> {
        let lower = name.to_ascii_lowercase();
        if let Ok(i) = ABBREVS.binary_search_by(|(a, _)| a.cmp(&lower.as_str())) {
            return Ok(match ABBREVS[i].1 {
                Abbrev::Fixed(s) => Zone::Fixed(s),
                Abbrev::Dynamic(z) => match jiff::tz::db().get(z) {
                    Ok(tz) => Zone::Dynamic(ABBREVS[i].0, tz),
                    Err(_) => {
                        return Err(PgError::feature(format!("time zone \"{name}\" (zone {z}) is not in this system's time zone database")))
                    }
                },
            });
        }
        // A file name with a parent reference is no zone (and is not looked up). The
        // database's `posix/` copies are the zones themselves; its `right/` ones count leap
        // seconds, which heapstore does not.
        // jiff knows CLDR's `Etc/Unknown`, which is no zone of PostgreSQL's database.
        if !name.is_empty() && !name.split('/').any(|p| p == ".." || p == ".") && !name.eq_ignore_ascii_case("etc/unknown") {
            let plain = name.strip_prefix("posix/").unwrap_or(name);
            if let Ok(tz) = jiff::tz::db().get(plain) {
                return Ok(Zone::Named(tz));
            }
            if name.starts_with("right/") {
                return Err(PgError::feature(format!("time zone \"{name}\" (with leap seconds) is not supported by heapstore")));
            }
        }
        match posix_offset(name) {
            Some(west) => Ok(Zone::Fixed(-west)),
            // PostgreSQL's POSIX reader takes more (daylight-saving rules, odd spellings):
            // a string with a digit in it may be one of those.
            None if name.bytes().any(|b| b.is_ascii_digit()) => Err(PgError::feature(format!(
                "time zone \"{name}\" is not supported by heapstore (POSIX time zone strings are read only as a name and an offset, without a daylight-saving part)"
            ))),
            None => Err(not_recognized(name)),
        }
    }

    /// The zone of `make_timestamptz(..., zone)` (PostgreSQL's `parse_sane_timezone`): a
    /// numeric offset first, ISO's sign (`+2` is two hours **east**; a leading digit is
    /// refused), else an abbreviation or a name as [`Zone::named`].
    pub fn sane(name: &str) -> Result<Zone> {
        if name.as_bytes().first().is_some_and(u8::is_ascii_digit) {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("invalid input syntax for type numeric time zone: \"{name}\""),
            )
            .with_hint("Numeric time zones must have \"-\" or \"+\" as first character."));
        }
        if name.starts_with(['+', '-']) {
            match super::dt_fields::decode_timezone(name.as_bytes()) {
                Ok(east) => return Ok(Zone::Fixed(east)),
                Err(super::dt_fields::DtErr::TzDispOverflow) => {
                    return Err(PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("numeric time zone \"{name}\" out of range")))
                }
                Err(super::dt_fields::DtErr::BadFormat) => {}
                Err(_) => return Err(not_recognized(name)),
            }
        }
        Zone::named(name)
    }

    /// The zone an interval gives: its offset east of UTC, which must fit in a day.
    pub fn interval(iv: &Interval) -> Result<Zone> {
        if iv.months != 0 || iv.days != 0 {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                format!("interval time zone \"{}\" must not include months or days", iv.to_text()),
            ));
        }
        // PostgreSQL: the seconds, truncated toward zero.
        let secs = iv.micros / 1_000_000;
        i32::try_from(secs).map(Zone::Fixed).map_err(|_| PgError::new("22008", "timestamp out of range"))
    }

    /// The zone's offset east of UTC if it never changes (`pg_get_timezone_offset`).
    pub fn fixed_offset(&self) -> Option<i32> {
        match self {
            Zone::Fixed(s) => Some(*s),
            Zone::Named(tz) => {
                // Every offset the zone has used is one (its abbreviations may differ), as
                // PostgreSQL checks its types; a zone with daylight-saving rules runs on forever.
                let first = tz.to_offset(jiff::Timestamp::MIN);
                let mut transitions = tz.following(jiff::Timestamp::MIN).take(1000);
                let all_same = transitions.by_ref().all(|t| t.offset() == first);
                (all_same && transitions.next().is_none()).then(|| first.seconds())
            }
            Zone::Dynamic(..) => None,
        }
    }

    /// The wall-clock time here at instant `utc` (timestamptz AT TIME ZONE): a timestamp.
    pub fn to_local(&self, utc: i64) -> Result<i64> {
        if utc == i64::MIN || utc == i64::MAX {
            return Ok(utc);
        }
        let off = match self {
            Zone::Fixed(s) => *s,
            Zone::Named(tz) => tz.to_offset(instant(within_rules(utc).0)?).seconds(),
            Zone::Dynamic(abbrev, tz) => {
                let info = tz.to_offset_info(instant(utc)?);
                if !info.abbreviation().eq_ignore_ascii_case(abbrev) {
                    return Err(dynamic_unused(abbrev));
                }
                info.offset().seconds()
            }
        };
        shifted(utc, i64::from(off))
    }

    /// The instant at which the clocks here read `local` (timestamp AT TIME ZONE): a
    /// timestamptz.
    pub fn from_local(&self, local: i64) -> Result<i64> {
        if local == i64::MIN || local == i64::MAX {
            return Ok(local);
        }
        let off = match self {
            Zone::Fixed(s) => *s,
            Zone::Named(tz) => pg_offset(tz.to_ambiguous_timestamp(civil(within_rules(local).0)?).offset()),
            Zone::Dynamic(abbrev, tz) => {
                let [a, b] = match tz.to_ambiguous_timestamp(civil(local)?).offset() {
                    jiff::tz::AmbiguousOffset::Unambiguous { offset } => [offset, offset],
                    jiff::tz::AmbiguousOffset::Gap { before, after } | jiff::tz::AmbiguousOffset::Fold { before, after } => [before, after],
                };
                // The offsets the local time may have where the abbreviation was in use.
                let mut fits = Vec::new();
                for o in [a, b] {
                    let at = shifted(local, -i64::from(o.seconds()))?;
                    if tz.to_offset_info(instant(at)?).abbreviation().eq_ignore_ascii_case(abbrev) && !fits.contains(&o) {
                        fits.push(o);
                    }
                }
                match fits.as_slice() {
                    [o] => o.seconds(),
                    _ => return Err(dynamic_unused(abbrev)),
                }
            }
        };
        shifted(local, -i64::from(off))
    }
}

/// 400 Gregorian years in microseconds: the calendar (and so a POSIX daylight-saving rule)
/// repeats after them.
const CYCLE_US: i64 = 146_097 * 86_400 * 1_000_000;

/// 9999-01-01 00:00 (2000-based microseconds): the last year a named zone's rules are
/// computed for directly.
const RULES_END: i64 = 252_424_080_000_000_000;

/// `t`, moved back by whole 400-year cycles until it is before [`RULES_END`], and the
/// shift applied.
fn within_rules(t: i64) -> (i64, i64) {
    if t < RULES_END {
        return (t, 0);
    }
    let k = (t - RULES_END) / CYCLE_US + 1;
    (t - k * CYCLE_US, k * CYCLE_US)
}

/// PostgreSQL's choice for a local time: in a gap the offset from before the transition,
/// in a fold the one from after it.
fn pg_offset(o: jiff::tz::AmbiguousOffset) -> i32 {
    match o {
        jiff::tz::AmbiguousOffset::Unambiguous { offset } => offset.seconds(),
        jiff::tz::AmbiguousOffset::Gap { before, .. } => before.seconds(),
        jiff::tz::AmbiguousOffset::Fold { after, .. } => after.seconds(),
    }
}

fn dynamic_unused(abbrev: &str) -> PgError {
    PgError::feature(format!("time zone abbreviation \"{abbrev}\" is not supported by heapstore at a time its zone did not use it"))
}

fn outside_rules() -> PgError {
    PgError::feature("a named time zone's rules are known to heapstore for the years 1 to 9999 only")
}

/// `t` moved by `secs` seconds, within timestamp's range (22008 otherwise).
fn shifted(t: i64, secs: i64) -> Result<i64> {
    t.checked_add(secs * 1_000_000).filter(|&r| is_valid_timestamp(r)).ok_or_else(|| PgError::new("22008", "timestamp out of range"))
}

fn instant(t: i64) -> Result<jiff::Timestamp> {
    t.checked_add(UNIX_TO_PG_US).and_then(|u| jiff::Timestamp::from_microsecond(u).ok()).ok_or_else(outside_rules)
}

/// The civil date and time a timestamp (without time zone) reads.
fn civil(t: i64) -> Result<jiff::civil::DateTime> {
    Ok(jiff::tz::Offset::UTC.to_datetime(instant(t)?))
}

/// A POSIX time zone of a name and an offset only: the offset's seconds, **west** of UTC
/// when positive. None for anything else.
fn posix_offset(s: &str) -> Option<i32> {
    let b = s.as_bytes();
    let mut i = 0;
    if b.first() == Some(&b'<') {
        // `<name>`: letters, digits, + and - between angle brackets.
        let end = b.iter().position(|&c| c == b'>')?;
        if end < 2 || !b[1..end].iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b':')) {
            return None;
        }
        i = end + 1;
    } else {
        while i < b.len() && b[i].is_ascii_alphabetic() {
            i += 1;
        }
    }
    let neg = match b.get(i) {
        Some(b'+') => {
            i += 1;
            false
        }
        Some(b'-') => {
            i += 1;
            true
        }
        _ => false,
    };
    // A number of at most `digits` digits, at most `max`, from `*i` on.
    let field = |i: &mut usize, max: i32, digits: usize| -> Option<i32> {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() && *i - start < digits {
            *i += 1;
        }
        let v: i32 = s.get(start..*i)?.parse().ok()?;
        (v <= max).then_some(v)
    };
    let h = field(&mut i, 167, 3)?;
    let mut secs = h * 3600;
    if b.get(i) == Some(&b':') {
        i += 1;
        secs += field(&mut i, 59, 2)? * 60;
        if b.get(i) == Some(&b':') {
            i += 1;
            secs += field(&mut i, 59, 2)?;
        }
    }
    (i == b.len()).then_some(if neg { -secs } else { secs })
}

// ---------------------------------------------------------------------------------------
// The session's time zone

thread_local! {
    /// The zone of the session this thread works for (module doc); `None` is UTC.
    static SESSION: std::cell::RefCell<Option<SessionZone>> = const { std::cell::RefCell::new(None) };
}

/// A session's time zone other than UTC.
#[derive(Clone, Debug)]
pub struct SessionZone {
    pub zone: Zone,
    /// A fixed offset's abbreviation (`to_char`'s `TZ`): the name part of its POSIX string.
    abbrev: Option<std::sync::Arc<str>>,
}

impl SessionZone {
    /// A zone to work in for a while (`date_trunc(unit, t, zone)`): no fixed-offset name.
    pub fn new(zone: Zone) -> SessionZone {
        SessionZone { zone, abbrev: None }
    }
}

/// A `TimeZone` value read as PostgreSQL's `check_timezone` (module doc): the value as
/// `SHOW` prints it, and the zone (`None` for UTC).
pub fn setting(value: &str) -> Result<(String, Option<SessionZone>)> {
    let invalid = || PgError::new(sqlstate::INVALID_PARAMETER_VALUE, format!("invalid value for parameter \"TimeZone\": \"{value}\""));
    let v = value.trim();
    let fixed = |east: i32, name: &str| {
        let abbrev = match name.strip_prefix('<') {
            Some(r) => r.split('>').next().unwrap_or(""),
            None => name.trim_end_matches(|c: char| !c.is_ascii_alphabetic()),
        };
        Some(SessionZone { zone: Zone::Fixed(east), abbrev: Some(std::sync::Arc::from(abbrev)) })
    };
    // A plain number: hours east of UTC.
    let numeric =
        !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.')) && v.bytes().any(|b| b.is_ascii_digit());
    if numeric {
        let hours: f64 = v.parse().map_err(|_| invalid())?;
        let secs = (hours * 3600.0).round();
        if secs.is_nan() || secs.abs() >= 168.0 * 3600.0 {
            return Err(invalid());
        }
        let east = secs as i32;
        let name = fixed_name(east);
        let zone = fixed(east, &name);
        return Ok((name, zone));
    }
    // jiff's CLDR `Etc/Unknown` is no zone of PostgreSQL's database.
    if !v.is_empty() && !v.split('/').any(|p| p == ".." || p == ".") && !v.eq_ignore_ascii_case("etc/unknown") {
        let plain = v.strip_prefix("posix/").unwrap_or(v);
        if let Ok(tz) = jiff::tz::db().get(plain) {
            // The database's spelling of the name, as PostgreSQL shows it.
            let shown = match tz.iana_name() {
                Some(n) if n.eq_ignore_ascii_case(plain) && plain.len() == v.len() => n.to_string(),
                _ => v.to_string(),
            };
            let utc = tz.to_fixed_offset().is_ok_and(|o| o.seconds() == 0)
                && tz.to_offset_info(jiff::Timestamp::UNIX_EPOCH).abbreviation() == "UTC";
            return Ok((shown, (!utc).then_some(SessionZone { zone: Zone::Named(tz), abbrev: None })));
        }
        if v.starts_with("right/") {
            return Err(PgError::feature(format!("time zone \"{v}\" (with leap seconds) is not supported by heapstore")));
        }
    }
    // UTC's names work without the system's time zone database too.
    match v.to_ascii_lowercase().as_str() {
        "utc" => return Ok(("UTC".to_string(), None)),
        "etc/utc" | "gmt" | "etc/gmt" | "zulu" | "etc/zulu" | "universal" | "etc/universal" => return Ok((v.to_string(), None)),
        _ => {}
    }
    match posix_offset(v) {
        Some(west) => Ok((v.to_string(), fixed(-west, v))),
        None if v.bytes().any(|b| b.is_ascii_digit()) && v.bytes().any(|b| b.is_ascii_alphabetic()) => Err(PgError::feature(format!(
            "time zone \"{v}\" is not supported by heapstore (POSIX time zone strings are read only as a name and an offset, without a daylight-saving part)"
        ))),
        None => Err(invalid()),
    }
}

/// The POSIX name PostgreSQL gives a fixed offset `east` seconds east of UTC: `<+05:30>-05:30`.
pub fn fixed_name(east: i32) -> String {
    let mut iso = Vec::new();
    push_offset(east, false, &mut iso);
    let mut posix = Vec::new();
    push_offset(-east, false, &mut posix);
    format!("<{}>{}", String::from_utf8_lossy(&iso), String::from_utf8_lossy(&posix))
}

/// `EncodeTimezone`: `+hh`, `+hh:mm` or `+hh:mm:ss` for an offset `east` seconds east of UTC
/// (`xsd`: minutes always, as JSON's timestamps).
pub fn push_offset(east: i32, xsd: bool, out: &mut Vec<u8>) {
    let a = east.unsigned_abs();
    let (h, m, s) = (a / 3600, a / 60 % 60, a % 60);
    out.push(if east >= 0 { b'+' } else { b'-' });
    super::util::push_padded(out, u64::from(h), 2);
    if m != 0 || s != 0 || xsd {
        out.push(b':');
        super::util::push_padded(out, u64::from(m), 2);
    }
    if s != 0 {
        out.push(b':');
        super::util::push_padded(out, u64::from(s), 2);
    }
}

thread_local! {
    /// Whether a stored definition is being bound (its literals are read in UTC).
    static STORED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// How many timestamptz literals without an offset a stored definition's binding read
    /// that the session's clocks would read as another instant.
    static ZONELESS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// How many of the input words `now`, `today`, `tomorrow`, `yesterday` it read.
    static NOW_WORDS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// While alive, timestamptz text without an offset is read in UTC (and counted): a stored
/// definition is being bound (module doc). The counts come back to what they were when it
/// drops, so a view read by the definition being made counts nothing.
#[must_use]
pub struct StoredScope {
    was_stored: bool,
    counts: (u64, u64),
}

impl Drop for StoredScope {
    fn drop(&mut self) {
        STORED.with(|s| s.set(self.was_stored));
        ZONELESS.with(|z| z.set(self.counts.0));
        NOW_WORDS.with(|z| z.set(self.counts.1));
    }
}

fn counts() -> (u64, u64) {
    (ZONELESS.with(|z| z.get()), NOW_WORDS.with(|z| z.get()))
}

/// Binds what follows as a stored definition's text (module doc).
pub fn stored_definition() -> StoredScope {
    StoredScope { was_stored: STORED.with(|s| s.replace(true)), counts: counts() }
}

/// Whether a stored definition is being bound.
pub fn in_stored_definition() -> bool {
    STORED.with(|s| s.get())
}

/// Runs `bind` (binding a DEFAULT, CHECK constraint or view as it is created) as a stored
/// definition; refuses it (0A000) if it read a timestamptz literal without an offset that
/// the session's zone reads as another instant than UTC (PostgreSQL would fix that other
/// instant), or one of the words `now`, `today`, `tomorrow`, `yesterday` (which PostgreSQL
/// fixes when the definition is made, where heapstore would read them at each use).
pub fn check_stored_definition<T>(what: &str, bind: impl FnOnce() -> Result<T>) -> Result<T> {
    let stored = stored_definition();
    let r = bind()?;
    let (zoneless, now_words) = counts();
    if now_words != stored.counts.1 {
        return Err(PgError::feature(format!(
            "the input words 'now', 'today', 'tomorrow' and 'yesterday' in {what} are not supported by heapstore"
        ))
        .with_detail("PostgreSQL reads them once, when the definition is made; heapstore would read them at each use.")
        .with_hint("Use now(), CURRENT_TIMESTAMP or CURRENT_DATE (read at each use), or write the value."));
    }
    if zoneless != stored.counts.0 {
        return Err(PgError::feature(format!(
            "a timestamp with time zone or time with time zone literal without an offset in {what} is not supported by heapstore outside TimeZone UTC"
        ))
        .with_detail("PostgreSQL fixes such a literal in the creating session's time zone; heapstore reads stored definitions in UTC.")
        .with_hint("Write the offset, as in '2024-01-01 00:00:00+01', or create it with TimeZone set to UTC."));
    }
    Ok(r)
}

/// Notes an input word read for the current time (`now`, `today`, ...) while a stored
/// definition is bound.
pub(crate) fn note_now_word() {
    if in_stored_definition() {
        NOW_WORDS.with(|z| z.set(z.get() + 1));
    }
}

/// The instant of a wall-clock time read from timestamptz text without an offset: the
/// session's clocks, or UTC's while a stored definition is bound (module doc).
pub fn utc_of_text(local: i64) -> Result<i64> {
    if in_stored_definition() {
        // Counted where the session's clocks would make it another instant.
        if utc_of(local).ok() != Some(local) {
            ZONELESS.with(|z| z.set(z.get() + 1));
        }
        return Ok(local);
    }
    utc_of(local)
}

/// The session zone's offset east of UTC, in seconds, when its clocks read `local`: the zone
/// of `time with time zone` text without one. UTC's while a stored definition is bound
/// (counted where the session's would differ, as [`utc_of_text`]).
pub fn offset_of_text_local(local: i64) -> Result<i32> {
    let east = ((local - utc_of(local)?) / 1_000_000) as i32;
    if in_stored_definition() {
        if east != 0 {
            ZONELESS.with(|z| z.set(z.get() + 1));
        }
        return Ok(0);
    }
    Ok(east)
}

thread_local! {
    /// When the transaction of the statement this thread runs started (`'now'` in input
    /// text, as PostgreSQL's `GetCurrentTransactionStartTimestamp`); None: the clock.
    static TXN_START: std::cell::Cell<Option<i64>> = const { std::cell::Cell::new(None) };
}

/// Installs the start of the transaction this thread's statement runs in.
pub fn set_transaction_start(at: Option<i64>) {
    TXN_START.with(|t| t.set(at));
}

/// The start of the transaction this thread's statement runs in, if one was installed.
pub fn transaction_start() -> Option<i64> {
    TXN_START.with(|t| t.get())
}

/// Installs `zone` as this thread's session zone (until changed again).
pub fn set_session(zone: Option<SessionZone>) {
    SESSION.with(|z| *z.borrow_mut() = zone);
}

/// The session zone installed on this thread (`None`: UTC).
pub fn session() -> Option<SessionZone> {
    SESSION.with(|z| z.borrow().clone())
}

/// While alive, a zone is this thread's session zone; then the one before comes back.
#[must_use]
pub struct Scope(Option<SessionZone>);

impl Drop for Scope {
    fn drop(&mut self) {
        set_session(self.0.take());
    }
}

/// Installs `zone` on this thread until the returned guard drops.
pub fn scope(zone: Option<SessionZone>) -> Scope {
    Scope(SESSION.with(|z| std::mem::replace(&mut *z.borrow_mut(), zone)))
}

/// Whether the session zone is UTC (the conversions are then the identity).
#[inline]
pub fn session_is_utc() -> bool {
    SESSION.with(|z| z.borrow().is_none())
}

/// The session's wall-clock time at instant `utc` (timestamptz → timestamp).
#[inline]
pub fn local_of(utc: i64) -> Result<i64> {
    SESSION.with(|z| match &*z.borrow() {
        None => Ok(utc),
        Some(s) => s.zone.to_local(utc),
    })
}

/// The instant at which the session's clocks read `local` (timestamp → timestamptz).
#[inline]
pub fn utc_of(local: i64) -> Result<i64> {
    SESSION.with(|z| match &*z.borrow() {
        None => Ok(local),
        Some(s) => s.zone.from_local(local),
    })
}

/// The session zone's offset east of UTC at instant `utc`, in seconds.
pub fn offset_of(utc: i64) -> Result<i32> {
    if utc == i64::MIN || utc == i64::MAX {
        return Ok(0);
    }
    SESSION.with(|z| match &*z.borrow() {
        None => Ok(0),
        Some(s) => Ok(((s.zone.to_local(utc)? - utc) / 1_000_000) as i32),
    })
}

/// The session zone's abbreviation at instant `utc` (`to_char`'s `TZ`): the zone's own
/// (`CET`, `EDT`, `+0530` where the database has none), or a fixed offset's POSIX name.
pub fn abbreviation_of(utc: i64) -> Result<String> {
    SESSION.with(|z| match &*z.borrow() {
        None => Ok("UTC".to_string()),
        Some(SessionZone { abbrev: Some(a), .. }) => Ok(a.to_string()),
        Some(SessionZone { zone: Zone::Named(tz), .. }) if utc != i64::MIN && utc != i64::MAX => {
            Ok(tz.to_offset_info(instant(within_rules(utc).0)?).abbreviation().to_string())
        }
        Some(_) => Ok(String::new()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviations_are_sorted_and_unique() {
        assert!(ABBREVS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(ABBREVS.iter().all(|(a, _)| *a == a.to_ascii_lowercase()));
    }

    #[test]
    fn posix_offsets_are_west_positive() {
        assert_eq!(posix_offset("+05"), Some(5 * 3600));
        assert_eq!(posix_offset("3"), Some(3 * 3600));
        assert_eq!(posix_offset("-05:30"), Some(-(5 * 3600 + 1800)));
        assert_eq!(posix_offset("UTC+3"), Some(3 * 3600));
        assert_eq!(posix_offset("<+0330>-3:30"), Some(-(3 * 3600 + 1800)));
        assert_eq!(posix_offset("+03:30:15"), Some(3 * 3600 + 1800 + 15));
        assert_eq!(posix_offset("+167"), Some(167 * 3600));
        for bad in ["", "+168", "XYZ", "+3EDT", "EST5EDT4", "+3.5", " +3", "+3 ", "<+05>", "+3:60", "1234"] {
            assert_eq!(posix_offset(bad), None, "{bad}");
        }
    }

    #[test]
    fn fixed_and_named_zones_convert_both_ways() {
        let t = 646_790_400_000_000; // 2020-06-30 00:00:00 (2000-based microseconds)
        assert_eq!(Zone::named("EST").unwrap().to_local(t).unwrap(), t - 5 * 3_600_000_000);
        assert_eq!(Zone::named("+05").unwrap().to_local(t).unwrap(), t - 5 * 3_600_000_000);
        assert!(Zone::named("Mars/Olympus").unwrap_err().code == sqlstate::INVALID_PARAMETER_VALUE);
        assert!(
            Zone::named("EST5EDT,M3.2.0,M11.1.0").is_err_and(|e| e.code == sqlstate::FEATURE_NOT_SUPPORTED)
                || jiff::tz::db().get("EST5EDT,M3.2.0,M11.1.0").is_ok()
        );
        if let Ok(ny) = Zone::named("america/new_york") {
            // Summer: UTC−4.
            assert_eq!(ny.to_local(t).unwrap(), t - 4 * 3_600_000_000);
            assert_eq!(ny.from_local(t - 4 * 3_600_000_000).unwrap(), t);
        }
    }
}

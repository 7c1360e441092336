//! The keyword tables consulted by the date/time decoder: PostgreSQL 15's `datetktbl`
//! (months, weekdays, AM/PM, AD/BC, special values, unit prefixes) and the time zone
//! abbreviations of the default `timezone_abbreviations` set (`Default`).
//!
//! `timestamp without time zone` and `date` ignore any zone in their input, so only the kind
//! of each abbreviation matters (it decides which field-mask bits the token claims), not its
//! offset.

/// Special values (`RESERV` tokens).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reserved {
    Early,
    Late,
    Epoch,
    Now,
    Today,
    Tomorrow,
    Yesterday,
    /// `allballs`: 00:00:00 UTC.
    Zulu,
}

/// Unit labels that prefix the next numeric field (`y2001m02d04`, `j2451545`, ISO `T`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Prefix {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Julian,
    /// The ISO `T` separator.
    Time,
    /// Units PostgreSQL recognises here but cannot use for a number (dow, doy, ...).
    Other,
}

/// What a lower-cased word means in `datetktbl`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Keyword {
    Reserved(Reserved),
    Month(i32),
    /// `at`, `on`: ignored.
    Ignore,
    Am,
    Pm,
    Ad,
    Bc,
    DayOfWeek,
    Units(Prefix),
    IsoTime,
    /// `dst` as a separate word after a zone abbreviation.
    DstModifier,
}

/// `DecodeSpecial` / `datebsearch(datetktbl)`.
pub(crate) fn keyword(word: &[u8]) -> Option<Keyword> {
    use Keyword as K;
    use Reserved as R;
    Some(match word {
        b"-infinity" => K::Reserved(R::Early),
        b"infinity" => K::Reserved(R::Late),
        b"epoch" => K::Reserved(R::Epoch),
        b"now" => K::Reserved(R::Now),
        b"today" => K::Reserved(R::Today),
        b"tomorrow" => K::Reserved(R::Tomorrow),
        b"yesterday" => K::Reserved(R::Yesterday),
        b"allballs" => K::Reserved(R::Zulu),
        b"ad" => K::Ad,
        b"bc" => K::Bc,
        b"am" => K::Am,
        b"pm" => K::Pm,
        b"at" | b"on" => K::Ignore,
        b"dst" => K::DstModifier,
        b"t" => K::IsoTime,
        _ => return month_or_weekday(word).or_else(|| unit(word).map(K::Units)),
    })
}

fn month_or_weekday(word: &[u8]) -> Option<Keyword> {
    let month = match word {
        b"jan" | b"january" => 1,
        b"feb" | b"february" => 2,
        b"mar" | b"march" => 3,
        b"apr" | b"april" => 4,
        b"may" => 5,
        b"jun" | b"june" => 6,
        b"jul" | b"july" => 7,
        b"aug" | b"august" => 8,
        b"sep" | b"sept" | b"september" => 9,
        b"oct" | b"october" => 10,
        b"nov" | b"november" => 11,
        b"dec" | b"december" => 12,
        b"sun" | b"sunday" | b"mon" | b"monday" | b"tue" | b"tues" | b"tuesday" | b"wed" | b"wednesday" | b"weds" | b"thu" | b"thur"
        | b"thurs" | b"thursday" | b"fri" | b"friday" | b"sat" | b"saturday" => return Some(Keyword::DayOfWeek),
        _ => return None,
    };
    Some(Keyword::Month(month))
}

fn unit(word: &[u8]) -> Option<Prefix> {
    Some(match word {
        b"y" => Prefix::Year,
        b"m" => Prefix::Month,
        b"d" => Prefix::Day,
        b"h" => Prefix::Hour,
        b"mm" => Prefix::Minute,
        b"s" => Prefix::Second,
        b"j" | b"jd" | b"julian" => Prefix::Julian,
        b"dow" | b"doy" | b"isodow" | b"isoyear" => Prefix::Other,
        _ => return None,
    })
}

/// Kinds of time zone abbreviation (`TZ`, `DTZ`, `DYNTZ` in PostgreSQL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ZoneAbbrev {
    /// Fixed offset, standard time.
    Standard,
    /// Fixed offset, daylight-saving time.
    Daylight,
    /// Offset depends on the date (defined by a zone name).
    Dynamic,
}

/// Lower-case abbreviations of the `Default` set, sorted, with their kind
/// (S = standard, D = daylight, Y = dynamic).
#[rustfmt::skip]
const ABBREVS: &[(&str, u8)] = &[
    ("acdt", b'D'), ("acsst", b'D'), ("acst", b'S'), ("act", b'S'), ("acwst", b'S'), ("adt", b'D'),
    ("aedt", b'D'), ("aesst", b'D'), ("aest", b'S'), ("aft", b'S'), ("akdt", b'D'), ("akst", b'S'),
    ("almst", b'D'), ("almt", b'S'), ("amst", b'Y'), ("amt", b'S'), ("anast", b'Y'), ("anat", b'Y'),
    ("arst", b'Y'), ("art", b'Y'), ("ast", b'S'), ("awsst", b'D'), ("awst", b'S'), ("azost", b'D'),
    ("azot", b'S'), ("azst", b'Y'), ("azt", b'Y'), ("bdst", b'D'), ("bdt", b'S'), ("bnt", b'S'),
    ("bort", b'S'), ("bot", b'S'), ("bra", b'S'), ("brst", b'D'), ("brt", b'S'), ("bst", b'D'),
    ("btt", b'S'), ("cadt", b'D'), ("cast", b'S'), ("cct", b'S'), ("cdt", b'D'), ("cest", b'D'),
    ("cet", b'S'), ("cetdst", b'D'), ("chadt", b'D'), ("chast", b'S'), ("chut", b'S'), ("ckt", b'Y'),
    ("clst", b'D'), ("clt", b'Y'), ("cot", b'S'), ("cst", b'S'), ("cxt", b'S'), ("davt", b'Y'),
    ("ddut", b'S'), ("easst", b'Y'), ("east", b'Y'), ("eat", b'S'), ("edt", b'D'), ("eest", b'D'),
    ("eet", b'S'), ("eetdst", b'D'), ("egst", b'D'), ("egt", b'S'), ("est", b'S'), ("fet", b'S'),
    ("fjst", b'D'), ("fjt", b'S'), ("fkst", b'Y'), ("fkt", b'Y'), ("fnst", b'D'), ("fnt", b'S'),
    ("galt", b'S'), ("gamt", b'S'), ("gest", b'Y'), ("get", b'Y'), ("gft", b'S'), ("gilt", b'S'),
    ("gmt", b'S'), ("gyt", b'Y'), ("hkt", b'S'), ("hst", b'S'), ("ict", b'S'), ("idt", b'D'),
    ("iot", b'Y'), ("irkst", b'Y'), ("irkt", b'Y'), ("irt", b'S'), ("ist", b'S'), ("jayt", b'S'),
    ("jst", b'S'), ("kdt", b'D'), ("kgst", b'D'), ("kgt", b'Y'), ("kost", b'Y'), ("krast", b'Y'),
    ("krat", b'Y'), ("kst", b'S'), ("lhdt", b'Y'), ("lhst", b'S'), ("ligt", b'S'), ("lint", b'Y'),
    ("lkt", b'Y'), ("magst", b'Y'), ("magt", b'Y'), ("mart", b'S'), ("mawt", b'Y'), ("mdt", b'D'),
    ("mest", b'D'), ("mesz", b'D'), ("met", b'S'), ("metdst", b'D'), ("mez", b'S'), ("mht", b'S'),
    ("mmt", b'S'), ("mpt", b'S'), ("msd", b'D'), ("msk", b'Y'), ("mst", b'S'), ("must", b'D'),
    ("mut", b'S'), ("mvt", b'S'), ("myt", b'S'), ("ndt", b'D'), ("nft", b'S'), ("novst", b'Y'),
    ("novt", b'Y'), ("npt", b'S'), ("nst", b'S'), ("nut", b'Y'), ("nzdt", b'D'), ("nzst", b'S'),
    ("nzt", b'S'), ("omsst", b'Y'), ("omst", b'Y'), ("pdt", b'D'), ("pet", b'S'), ("petst", b'Y'),
    ("pett", b'Y'), ("pgt", b'S'), ("pht", b'S'), ("pkst", b'D'), ("pkt", b'S'), ("pmdt", b'D'),
    ("pmst", b'S'), ("pont", b'S'), ("pst", b'S'), ("pwt", b'S'), ("pyst", b'D'), ("pyt", b'Y'),
    ("ret", b'S'), ("sadt", b'D'), ("sast", b'S'), ("sct", b'S'), ("sgt", b'Y'), ("taht", b'S'),
    ("tft", b'S'), ("tjt", b'S'), ("tkt", b'Y'), ("tmt", b'Y'), ("tot", b'S'), ("trut", b'S'),
    ("tvt", b'S'), ("uct", b'S'), ("ulast", b'D'), ("ulat", b'Y'), ("ut", b'S'), ("utc", b'S'),
    ("uyst", b'D'), ("uyt", b'S'), ("uzst", b'D'), ("uzt", b'S'), ("vet", b'Y'), ("vlast", b'Y'),
    ("vlat", b'Y'), ("volt", b'Y'), ("vut", b'S'), ("wadt", b'D'), ("wakt", b'S'), ("wast", b'S'),
    ("wat", b'S'), ("wdt", b'D'), ("wet", b'S'), ("wetdst", b'D'), ("wft", b'S'), ("wgst", b'D'),
    ("wgt", b'S'), ("xjt", b'S'), ("yakst", b'Y'), ("yakt", b'Y'), ("yapt", b'S'), ("yekst", b'D'),
    ("yekt", b'Y'), ("z", b'S'), ("zulu", b'S'),
];

/// `DecodeTimezoneAbbrev` against the default abbreviation set.
pub(crate) fn zone_abbrev(word: &[u8]) -> Option<ZoneAbbrev> {
    let i = ABBREVS.binary_search_by(|(name, _)| name.as_bytes().cmp(word)).ok()?;
    Some(match ABBREVS[i].1 {
        b'D' => ZoneAbbrev::Daylight,
        b'Y' => ZoneAbbrev::Dynamic,
        _ => ZoneAbbrev::Standard,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviations_sorted_and_found() {
        assert!(ABBREVS.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(ABBREVS.len(), 195);
        assert_eq!(zone_abbrev(b"utc"), Some(ZoneAbbrev::Standard));
        assert_eq!(zone_abbrev(b"edt"), Some(ZoneAbbrev::Daylight));
        assert_eq!(zone_abbrev(b"msk"), Some(ZoneAbbrev::Dynamic));
        assert_eq!(zone_abbrev(b"foo"), None);
    }

    #[test]
    fn keywords() {
        assert_eq!(keyword(b"sept"), Some(Keyword::Month(9)));
        assert_eq!(keyword(b"t"), Some(Keyword::IsoTime));
        assert_eq!(keyword(b"jd"), Some(Keyword::Units(Prefix::Julian)));
        assert_eq!(keyword(b"+infinity"), None);
    }
}

//! Timestamps as the API carries them: RFC 3339 in UTC with milliseconds, so they sort as text.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

pub fn now() -> String {
    stamp(OffsetDateTime::now_utc())
}

/// The stamp of `ago` before now, as `now` writes it.
pub fn before_now(ago: std::time::Duration) -> String {
    stamp(OffsetDateTime::now_utc() - ago)
}

/// `at` as `now` writes it: always three digits of milliseconds. RFC 3339 lets a writer leave
/// out a zero fraction, but `…:58Z` sorts after `…:58.4Z` as text, so a record made on a whole
/// second would sort after the others of its second (`ORDER BY created_at`).
fn stamp(at: OffsetDateTime) -> String {
    let (date, time) = (at.date(), at.time());
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        date.year(),
        u8::from(date.month()),
        date.day(),
        time.hour(),
        time.minute(),
        time.second(),
        time.millisecond()
    )
}

/// Milliseconds from `from` to `to`, two timestamps as `now` writes them; `None` when
/// either cannot be read.
pub fn millis_between(from: &str, to: &str) -> Option<i64> {
    let from = OffsetDateTime::parse(from, &Rfc3339).ok()?;
    let to = OffsetDateTime::parse(to, &Rfc3339).ok()?;
    Some((to - from).whole_milliseconds() as i64)
}

#[cfg(test)]
mod stamp_tests {
    use super::*;

    #[test]
    fn a_whole_second_keeps_its_fraction_so_stamps_sort_as_text() {
        let whole = OffsetDateTime::from_unix_timestamp(1_764_700_000).unwrap();
        let later = whole + time::Duration::milliseconds(400);
        assert_eq!(stamp(whole), "2025-12-02T18:26:40.000Z");
        assert_eq!(stamp(later), "2025-12-02T18:26:40.400Z");
        assert!(stamp(whole) < stamp(later));
        assert_eq!(OffsetDateTime::parse(&stamp(later), &Rfc3339).unwrap(), later);
    }
}

//! Timestamps as the API carries them: RFC 3339 in UTC with milliseconds, so they sort as text.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

pub fn now() -> String {
    let now = OffsetDateTime::now_utc();
    let now = now.replace_nanosecond(now.millisecond() as u32 * 1_000_000).unwrap_or(now);
    now.format(&Rfc3339).unwrap_or_default()
}

/// Milliseconds from `from` to `to`, two timestamps as `now` writes them; `None` when
/// either cannot be read.
pub fn millis_between(from: &str, to: &str) -> Option<i64> {
    let from = OffsetDateTime::parse(from, &Rfc3339).ok()?;
    let to = OffsetDateTime::parse(to, &Rfc3339).ok()?;
    Some((to - from).whole_milliseconds() as i64)
}

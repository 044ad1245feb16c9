//! Timestamps as the API carries them: RFC 3339 in UTC with milliseconds, so they sort as text.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

pub fn now() -> String {
    let now = OffsetDateTime::now_utc();
    let now = now.replace_nanosecond(now.millisecond() as u32 * 1_000_000).unwrap_or(now);
    now.format(&Rfc3339).unwrap_or_default()
}

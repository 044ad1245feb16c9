//! Session ids: UUID v4 in canonical lowercase hyphenated form, validated before any
//! path is built from one, so `../x` or an absolute path never reaches the file system.

use kiln_types::error::{ApiError, ErrorCode, Result};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionId(String);

impl SessionId {
    pub fn new() -> SessionId {
        SessionId(uuid::Uuid::new_v4().hyphenated().to_string())
    }

    pub fn parse(text: &str) -> Result<SessionId> {
        let invalid = || {
            let shown: String = text.chars().take(80).collect();
            ApiError::new(
                ErrorCode::InvalidSessionId,
                format!("`{}` is not a session id (a UUID v4)", shown.escape_debug()),
            )
        };
        if text.len() != 36 {
            return Err(invalid());
        }
        let uuid = uuid::Uuid::try_parse(text).map_err(|_| invalid())?;
        if uuid.get_version_num() != 4 || uuid.hyphenated().to_string() != text {
            return Err(invalid());
        }
        Ok(SessionId(text.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for SessionId {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_only_canonical_v4() {
        let id = SessionId::new();
        assert_eq!(SessionId::parse(id.as_str()).unwrap(), id);
        for bad in [
            "",
            "../../etc/passwd",
            "/tmp/x",
            "0f8fad5b-d9cb-469f-a165-70867728950e/..",
            "0F8FAD5B-D9CB-469F-A165-70867728950E",
            "{0f8fad5b-d9cb-469f-a165-70867728950e}",
            "0f8fad5bd9cb469fa16570867728950e",
            "0f8fad5b-d9cb-169f-a165-70867728950e", // version 1
            "0f8fad5b-d9cb-469f-a165-70867728950\0",
        ] {
            let err = SessionId::parse(bad).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidSessionId, "{bad:?}");
        }
    }
}

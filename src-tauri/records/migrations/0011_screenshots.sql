-- Screenshots of a session's preview (issue 20): taken after a turn that changed a module
-- with a preview (kind `turn`, bound to that turn's checkpoint), or on the operator's
-- request (`page`, `element`, `region`). The PNG lives in the session's directory
-- (`screenshots/<id>.png`); the row says what it shows.
CREATE TABLE screenshots (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    kind          TEXT NOT NULL,
    checkpoint    INTEGER,
    module_id     TEXT,
    page_path     TEXT NOT NULL,
    width         INTEGER NOT NULL,
    height        INTEGER NOT NULL,
    bytes         INTEGER NOT NULL,
    taken_at      TEXT NOT NULL
);
CREATE INDEX screenshots_by_session ON screenshots (session_id, id);

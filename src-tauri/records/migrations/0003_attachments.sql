-- A session's attachments (SPEC §13): stored under sessions/<id>/attachments/ and
-- copied into the working copy at reference/attachments/<name>.

CREATE TABLE attachments (
    id          TEXT PRIMARY KEY NOT NULL,
    session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('image', 'file')),
    size        INTEGER NOT NULL,
    added_at    TEXT NOT NULL,
    UNIQUE (session_id, name)
);

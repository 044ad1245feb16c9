-- Issue 20: best-of-N. One brief fanned out to candidate sessions forms a group; each
-- candidate is a normal session that knows its group and its place in it, and the group
-- records the candidate picked for delivery. PostgreSQL's copy of
-- migrations/0009_session_groups.sql.
CREATE TABLE session_groups (
    id                  TEXT PRIMARY KEY NOT NULL,
    title               TEXT NOT NULL,
    brief               TEXT NOT NULL,
    created_at          TEXT NOT NULL,
    picked_session_id   TEXT,
    picked_at           TEXT
);

ALTER TABLE sessions ADD COLUMN group_id TEXT REFERENCES session_groups (id);
ALTER TABLE sessions ADD COLUMN candidate BIGINT;

CREATE INDEX sessions_group ON sessions (group_id);

-- Issue 20: the operator's comments on lines of a session's diff, sent to the agent as a
-- review. Lines are the working copy's (the new side of the diff), 1-based and inclusive;
-- `quote` is what those lines held when the comment was made, read by Kiln. A comment is
-- open, then sent with a turn, then addressed (its lines changed in that turn: the operator
-- resolves it) or open again (they did not: `note` says so); resolved is the operator's.
-- PostgreSQL's copy of migrations/0010_review_comments.sql.
CREATE TABLE review_comments (
    id               TEXT PRIMARY KEY,
    session_id       TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    path             TEXT NOT NULL,
    start_line       BIGINT NOT NULL,
    end_line         BIGINT NOT NULL,
    quote            TEXT NOT NULL,
    body             TEXT NOT NULL,
    state            TEXT NOT NULL,
    -- The checkpoint the working copy was when the comment was sent: what its turn changed
    -- is read against it.
    sent_checkpoint  BIGINT,
    turn_id          BIGINT REFERENCES turns (id) ON DELETE SET NULL,
    note             TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    -- SQLite's implicit rowid, made explicit: the store lists comments made in the same
    -- instant in insertion order (`ORDER BY created_at, rowid`).
    rowid            BIGINT GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX review_comments_by_session ON review_comments (session_id, created_at);

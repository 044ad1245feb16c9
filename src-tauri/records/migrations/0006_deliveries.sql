-- Delivery runs (SPEC §12): one row per attempt to deliver a session, with its steps as
-- they start, pass, fail or are skipped (JSON, redacted before it is stored), what
-- landed, and the pull request a git-pr run made. The latest row is the session's run.
CREATE TABLE deliveries (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    target        TEXT NOT NULL,
    state         TEXT NOT NULL,
    plan_id       TEXT NOT NULL,
    steps         TEXT NOT NULL,
    landed        TEXT NOT NULL,
    pull_request  TEXT,
    error         TEXT,
    started_at    TEXT NOT NULL,
    ended_at      TEXT
);
CREATE INDEX deliveries_by_session ON deliveries (session_id, started_at);

-- Auto-review reports (SPEC §6): one per session module, stored by Kiln rather than in
-- the agent's working copy, bound to the SHA-256 of the module's files when it was
-- written, so any later edit makes it stale. PostgreSQL's copy of migrations/0005_reviews.sql
-- (`passed` is a bool in the store, so BOOLEAN here).
CREATE TABLE reviews (
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    module_id     TEXT NOT NULL,
    files_sha256  TEXT NOT NULL,
    passed        BOOLEAN NOT NULL,
    summary       TEXT NOT NULL,
    report        TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (session_id, module_id)
);

-- Sessions, their modules, transcripts and restore points (SPEC §4, §8, §14).
-- One row per fact; nothing is stored as a JSON blob of everything.

CREATE TABLE sessions (
    id             TEXT PRIMARY KEY NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('new-module', 'edit-module')),
    title          TEXT NOT NULL,
    brief          TEXT NOT NULL,
    role           TEXT,
    driver         TEXT,
    model          TEXT,
    auto_continue  INTEGER NOT NULL DEFAULT 1,
    chain_depth    INTEGER NOT NULL DEFAULT 0,
    state          TEXT NOT NULL CHECK (state IN ('planning', 'awaiting-approval', 'editing', 'running', 'review', 'blocked', 'delivered')),
    setup          TEXT NOT NULL DEFAULT 'none' CHECK (setup IN ('none', 'running', 'passed', 'failed')),
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    delivered_at   TEXT,
    archived_at    TEXT,
    rejected_at    TEXT,
    deleted_at     TEXT
);

CREATE INDEX sessions_created ON sessions (created_at);

CREATE TABLE session_modules (
    session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    position       INTEGER NOT NULL,
    module_id      TEXT NOT NULL,
    directory      TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('new', 'edit')),
    joined_at      TEXT NOT NULL,
    base_sequence  INTEGER NOT NULL,
    PRIMARY KEY (session_id, module_id)
);

CREATE TABLE resume_ids (
    session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    driver         TEXT NOT NULL,
    resume_id      TEXT NOT NULL,
    PRIMARY KEY (session_id, driver)
);

CREATE TABLE transcript_entries (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    kind           TEXT NOT NULL CHECK (kind IN ('user', 'agent', 'system', 'tool', 'gate', 'handoff')),
    module_id      TEXT,
    role           TEXT,
    text           TEXT NOT NULL,
    created_at     TEXT NOT NULL
);

CREATE INDEX transcript_by_session ON transcript_entries (session_id, id);

CREATE TABLE checkpoints (
    session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    sequence       INTEGER NOT NULL,
    commit_id      TEXT NOT NULL,
    label          TEXT NOT NULL,
    role           TEXT,
    module_id      TEXT,
    created_at     TEXT NOT NULL,
    PRIMARY KEY (session_id, sequence)
);

-- The result of each setup or gate run (SPEC §10); `gate` is e.g. 'dependencies'.
CREATE TABLE gate_results (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    module_id      TEXT,
    gate           TEXT NOT NULL,
    command        TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'skipped')),
    exit_code      INTEGER,
    duration_ms    INTEGER NOT NULL,
    output_head    TEXT NOT NULL,
    output_tail    TEXT NOT NULL,
    created_at     TEXT NOT NULL
);

-- Gates that judge the change (issue 31): a failure is compared with the session's base.
-- `failing-before` is a gate that fails the same way at the base (never a blocker), and each
-- result carries its verdict in words (`note`: "1 new failure: `name`", "not run: setup
-- failed: …"). SQLite cannot change a CHECK constraint in place, so the table is rebuilt.
CREATE TABLE gate_results_new (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    module_id      TEXT,
    gate           TEXT NOT NULL,
    command        TEXT NOT NULL,
    source         TEXT NOT NULL DEFAULT '',
    status         TEXT NOT NULL CHECK (status IN ('passed', 'failed', 'failing-before', 'skipped', 'not-configured')),
    exit_code      INTEGER,
    duration_ms    INTEGER NOT NULL,
    output_head    TEXT NOT NULL,
    output_tail    TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    note           TEXT NOT NULL DEFAULT ''
);
INSERT INTO gate_results_new (id, session_id, module_id, gate, command, source, status, exit_code, duration_ms, output_head, output_tail, created_at)
    SELECT id, session_id, module_id, gate, command, source, status, exit_code, duration_ms, output_head, output_tail, created_at FROM gate_results;
DROP TABLE gate_results;
ALTER TABLE gate_results_new RENAME TO gate_results;
CREATE INDEX gate_results_session ON gate_results (session_id, gate, module_id);

-- A gate's command run on a base tree (checkpoint 0 of a session), once per tree and
-- command: later turns and other sessions from the same base reuse it. `failing` is the
-- JSON list of the tests or files it named failing, or null when its output names none.
CREATE TABLE gate_baselines (
    base_tree    TEXT NOT NULL,
    module_id    TEXT NOT NULL,
    gate         TEXT NOT NULL,
    command      TEXT NOT NULL,
    passed       INTEGER NOT NULL,
    failing      TEXT,
    output_head  TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (base_tree, module_id, gate, command)
);

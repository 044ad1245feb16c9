-- Issue 33: a session can take in what changed in the workspace ("update from the
-- workspace"). PostgreSQL's copy of migrations/0017_session_base.sql.
ALTER TABLE sessions ADD COLUMN base_sequence BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN conflicts TEXT NOT NULL DEFAULT '[]';

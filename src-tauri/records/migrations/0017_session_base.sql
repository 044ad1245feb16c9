-- Issue 33: a session can take in what changed in the workspace ("update from the
-- workspace"). Its change is then measured from the checkpoint holding the workspace as it
-- was at the update, not from its start (0), and the files the merge left conflicting are
-- kept until they hold no conflict markers (a JSON array of paths).
ALTER TABLE sessions ADD COLUMN base_sequence INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN conflicts TEXT NOT NULL DEFAULT '[]';

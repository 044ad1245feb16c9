-- Issue 15: a blocked turn can be retried as it ran (its prompt and whether it was a
-- review are kept with it), and the checkpoint the working copy is now (the one most
-- recently taken or restored to; NULL means the latest) is known.
ALTER TABLE turns ADD COLUMN prompt TEXT;
ALTER TABLE turns ADD COLUMN review INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN current_checkpoint INTEGER;

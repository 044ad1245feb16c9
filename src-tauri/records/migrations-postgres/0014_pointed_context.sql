-- What the operator pointed at in the preview with a message (issue 20): the chips an
-- operator message shows, as JSON (`PointedChip`s: screenshot, kind, page, selector);
-- NULL for every other entry. PostgreSQL's copy of migrations/0014_pointed_context.sql.
ALTER TABLE transcript_entries ADD COLUMN context TEXT;

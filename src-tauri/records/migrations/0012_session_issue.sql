-- Issue 20: the GitHub issue a session started from (its web address, number and the
-- owner/name of its repository), so the session links to it and its pull request closes it.
ALTER TABLE sessions ADD COLUMN issue_url TEXT;
ALTER TABLE sessions ADD COLUMN issue_number INTEGER;
ALTER TABLE sessions ADD COLUMN issue_repo TEXT;

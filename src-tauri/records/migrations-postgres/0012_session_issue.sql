-- Issue 20: the GitHub issue a session started from (its web address, number and the
-- owner/name of its repository), so the session links to it and its pull request closes it.
-- PostgreSQL's copy of migrations/0012_session_issue.sql.
ALTER TABLE sessions ADD COLUMN issue_url TEXT;
ALTER TABLE sessions ADD COLUMN issue_number BIGINT;
ALTER TABLE sessions ADD COLUMN issue_repo TEXT;

-- Issue 33: a gate result says which files it judged (a digest of the working copy's
-- files as a checkpoint sees them), so after a restore the gates shown are the ones that
-- ran on the files as they are, and a result of other files says so. Empty for results
-- kept before this.
ALTER TABLE gate_results ADD COLUMN digest TEXT NOT NULL DEFAULT '';

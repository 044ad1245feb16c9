-- A turn's checkpoint shares its place with that turn's handoff entry (SPEC §8), so the
-- transcript line and its restore point go together. PostgreSQL's copy of
-- migrations/0004_checkpoint_entries.sql.
ALTER TABLE checkpoints ADD COLUMN entry_id BIGINT;

-- 0009: a try at an owed unban (migration 0008) is claimed before the platform is called, so two processes on one
-- mod log (shards, a restart overlapping the old process) never unban the member twice or count one try twice.
-- lift_held_until: NULL when no try is under way; else the time (ISO-8601 UTC text) until which the process that
-- claimed the try holds it (or, after a refusal, until its next try). A claim is taken only where this is NULL or
-- past (a process stopped mid-try). lift_tries still counts refused tries only.
ALTER TABLE cases ADD COLUMN lift_held_until TEXT;

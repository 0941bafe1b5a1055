-- 0011: a case left pending by a stop (recorded, its platform call not answered) is carried out at the next start
-- by one process only: two processes on one mod log starting together both found it and both carried it out (two
-- timeouts, two notices, two strikes for one warning).
-- pending_held_until: NULL, or the time (ISO-8601 UTC text) until which the process that claimed the pending case at
-- its start holds it. Another process's start takes it only where this is NULL or past (a process that stopped
-- holding it).
ALTER TABLE cases ADD COLUMN pending_held_until TEXT;

-- 0013: raid mode is ended by one process: two processes owning one server (two shards restarting, a restart
-- overlapping the old process) both ended it, lifting the slowmode twice and posting "Raid mode off" twice.
-- end_held_until: NULL, or the time (ISO-8601 UTC text) until which the process that claimed the end of this
-- channel's raid mode holds it (it lifts the slowmode, then deletes the row). Another process takes the end only
-- where this is NULL or past (a process that stopped while ending it).
ALTER TABLE raid_modes ADD COLUMN end_held_until TEXT;

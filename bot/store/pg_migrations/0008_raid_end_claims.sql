-- 0008 (PostgreSQL): as SQLite's migration 0013, raid mode is ended by the one process that claimed its end (held
-- until end_held_until; NULL or past: free to claim).
ALTER TABLE raid_modes ADD COLUMN end_held_until TEXT;

-- 0006 (PostgreSQL): as SQLite's migration 0011, a pending case is carried out at a start by the one process that
-- claimed it (held until pending_held_until; NULL or past: free to claim).
ALTER TABLE cases ADD COLUMN pending_held_until TEXT;

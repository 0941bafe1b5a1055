-- 0004 (PostgreSQL): as SQLite's migration 0009, a try at an owed unban is claimed before the platform is called;
-- lift_held_until is NULL when no try is under way, else until when the claiming process holds it.
ALTER TABLE cases ADD COLUMN lift_held_until TEXT;

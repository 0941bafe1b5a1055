-- 0003 (PostgreSQL): as SQLite's migration 0008, an overturned ban whose unban was refused is retried;
-- lift_tries is NULL while no lift is owed, else the number of refused tries.
ALTER TABLE cases ADD COLUMN lift_tries INTEGER;

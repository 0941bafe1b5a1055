-- 0005 (PostgreSQL): as SQLite's migration 0010, an escalation case names the case whose strike crossed its ladder
-- step (NULL for every other case).
ALTER TABLE cases ADD COLUMN escalated_from INTEGER;

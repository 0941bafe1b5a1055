-- 0002 (PostgreSQL): a message's time may be unknown (NULL), as SQLite's migration 0007: a JSON line without
-- "created_at" was recorded as posted at the Unix epoch.
ALTER TABLE messages ALTER COLUMN created_at DROP NOT NULL;

-- 0007 (PostgreSQL): as SQLite's migration 0012, a posted review card whose message's text was erased is edited to
-- say so: when (or when given up on after card_erase_tries refusals); NULL while still owed.
ALTER TABLE review_items ADD COLUMN card_erased_at TEXT;
ALTER TABLE review_items ADD COLUMN card_erase_tries INTEGER NOT NULL DEFAULT 0;

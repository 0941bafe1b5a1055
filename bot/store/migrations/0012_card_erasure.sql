-- 0012: a review card already posted shows its message's text; once retention (or forgetting) erased that text
-- from the mod log, the bot edits the card to say so. card_erased_at: when the card was edited (or given up on:
-- the platform refused card_erase_tries times: the card was deleted, its channel is gone); NULL while still owed.
ALTER TABLE review_items ADD COLUMN card_erased_at TEXT;
ALTER TABLE review_items ADD COLUMN card_erase_tries INTEGER NOT NULL DEFAULT 0;

-- modbot: foreign_keys off
-- 0007: a message's time may be unknown. A JSON line without "created_at" was recorded as posted at the Unix epoch
-- (1970-01-01), which the mod log then showed, and retention erased at once; its time is now NULL. SQLite cannot
-- drop a NOT NULL constraint in place: the table is rebuilt (the migration runs with foreign keys off and is
-- checked with PRAGMA foreign_key_check before it commits), its rows and indexes unchanged.
CREATE TABLE messages_0007 (
    platform    TEXT NOT NULL,
    server_id   TEXT NOT NULL,
    message_id  TEXT NOT NULL,
    channel_id  TEXT NOT NULL,
    author_id   TEXT NOT NULL,
    created_at  TEXT,            -- NULL: the source gave no time
    edited_at   TEXT,
    excerpt     TEXT,            -- kept only for the retention period, then NULL
    purged_at   TEXT,            -- when the excerpt was erased (retention or forget)
    PRIMARY KEY (platform, server_id, message_id)
);
INSERT INTO messages_0007 (platform, server_id, message_id, channel_id, author_id, created_at, edited_at, excerpt,
                           purged_at)
    SELECT platform, server_id, message_id, channel_id, author_id, created_at, edited_at, excerpt, purged_at
    FROM messages;
DROP TABLE messages;
ALTER TABLE messages_0007 RENAME TO messages;
CREATE INDEX messages_author ON messages (platform, server_id, author_id, created_at);
CREATE INDEX messages_with_text ON messages (created_at) WHERE excerpt IS NOT NULL;

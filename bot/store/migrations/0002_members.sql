-- 0002: member helpers: first-message tracking, pseudonyms for /mydata forget, store metadata.

CREATE TABLE member_first_seen (
    platform          TEXT NOT NULL,
    server_id         TEXT NOT NULL,
    member_id         TEXT NOT NULL,
    first_message_at  TEXT NOT NULL,
    PRIMARY KEY (platform, server_id, member_id)
);

-- Backfill from the messages a version-1 database already holds.
INSERT INTO member_first_seen (platform, server_id, member_id, first_message_at)
    SELECT platform, server_id, author_id, MIN(created_at) FROM messages GROUP BY platform, server_id, author_id;

-- Pseudonyms handed out by forget_member. The original member id is never stored.
CREATE TABLE member_pseudonyms (
    platform      TEXT NOT NULL,
    server_id     TEXT NOT NULL,
    pseudonym     TEXT NOT NULL,
    forgotten_at  TEXT NOT NULL,
    PRIMARY KEY (platform, server_id, pseudonym)
);

-- Key/value store metadata (e.g. the secret salt of pseudonyms).
CREATE TABLE store_meta (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);

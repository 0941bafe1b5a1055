-- 0003: what the moderation workflow needs to survive a restart: lifted temporary bans, raid cards and raid mode.

-- When a temporary ban was lifted (NULL while it still runs); a ban case with expires_at and no lifted_at is
-- rescheduled at startup.
ALTER TABLE cases ADD COLUMN lifted_at TEXT;
CREATE INDEX cases_expiring ON cases (platform, expires_at) WHERE expires_at IS NOT NULL AND lifted_at IS NULL;
CREATE INDEX cases_pending ON cases (platform, status) WHERE status = 'pending';

-- A raid's single card in the review channel, the thread or channel it happened in, and when it was closed.
ALTER TABLE raids ADD COLUMN card_message_id TEXT;
ALTER TABLE raids ADD COLUMN thread_id TEXT;
ALTER TABLE raids ADD COLUMN closed_at TEXT;

-- Raid mode in force per channel or thread: until (NULL = until a moderator switches it off) and the slowmode the
-- bot set there (lifted when raid mode ends, also after a restart).
CREATE TABLE raid_modes (
    platform    TEXT NOT NULL,
    server_id   TEXT NOT NULL,
    channel_id  TEXT NOT NULL,
    until       TEXT,
    slowmode_s  INTEGER NOT NULL DEFAULT 0,
    raid_id     INTEGER REFERENCES raids (id),
    started_at  TEXT NOT NULL,
    PRIMARY KEY (platform, server_id, channel_id)
);

-- When a member was seen joining (Slack gives no account age; a join is the new-member signal there).
CREATE TABLE member_joins (
    platform    TEXT NOT NULL,
    server_id   TEXT NOT NULL,
    member_id   TEXT NOT NULL,
    joined_at   TEXT NOT NULL,
    PRIMARY KEY (platform, server_id, member_id)
);

-- 0001: the mod log's base schema.
-- Conventions: every time is ISO-8601 UTC text with microseconds and a "+00:00" offset
-- (fixed width, so text order is time order); JSON columns hold compact JSON text;
-- every row is scoped by (platform, server_id).

CREATE TABLE messages (
    platform    TEXT NOT NULL,
    server_id   TEXT NOT NULL,
    message_id  TEXT NOT NULL,
    channel_id  TEXT NOT NULL,
    author_id   TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    edited_at   TEXT,
    excerpt     TEXT,            -- kept only for the retention period, then NULL
    purged_at   TEXT,            -- when the excerpt was erased (retention or forget)
    PRIMARY KEY (platform, server_id, message_id)
);
CREATE INDEX messages_author ON messages (platform, server_id, author_id, created_at);
CREATE INDEX messages_with_text ON messages (created_at) WHERE excerpt IS NOT NULL;

CREATE TABLE verdicts (
    id              INTEGER PRIMARY KEY,
    platform        TEXT NOT NULL,
    server_id       TEXT NOT NULL,
    message_id      TEXT NOT NULL,
    member_id       TEXT NOT NULL,
    channel_id      TEXT NOT NULL,
    edited_at       TEXT,                       -- edit time this verdict judged (NULL = original post)
    scores          TEXT,                       -- JSON {label: score|null} or NULL when not scored
    rule_hits       TEXT NOT NULL DEFAULT '[]', -- JSON [{rule, detail, label, action}]
    labels          TEXT NOT NULL DEFAULT '[]', -- JSON [label]
    flagged         INTEGER NOT NULL DEFAULT 0 CHECK (flagged IN (0, 1)),
    action          TEXT NOT NULL DEFAULT 'none',
    strike_points   INTEGER NOT NULL DEFAULT 0,
    exempt          TEXT,
    model_name      TEXT NOT NULL DEFAULT '',
    model_version   TEXT,
    policy_version  TEXT NOT NULL DEFAULT '',
    latency_ms      REAL NOT NULL DEFAULT 0,
    shadow          INTEGER NOT NULL DEFAULT 0 CHECK (shadow IN (0, 1)),
    revision        INTEGER NOT NULL DEFAULT 1 CHECK (revision >= 1),
    judged_at       TEXT NOT NULL,
    UNIQUE (platform, server_id, message_id),
    FOREIGN KEY (platform, server_id, message_id) REFERENCES messages (platform, server_id, message_id)
);
CREATE INDEX verdicts_judged ON verdicts (platform, server_id, judged_at);
CREATE INDEX verdicts_member ON verdicts (platform, server_id, member_id);

CREATE TABLE case_counters (
    platform     TEXT NOT NULL,
    server_id    TEXT NOT NULL,
    last_number  INTEGER NOT NULL,
    PRIMARY KEY (platform, server_id)
);

CREATE TABLE cases (
    id            INTEGER PRIMARY KEY,
    platform      TEXT NOT NULL,
    server_id     TEXT NOT NULL,
    number        INTEGER NOT NULL CHECK (number >= 1),
    member_id     TEXT NOT NULL,
    action        TEXT NOT NULL,
    reason        TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL CHECK (status IN ('pending', 'applied', 'failed', 'shadow', 'overturned', 'pardoned')),
    failure       TEXT,
    moderator_id  TEXT,
    message_id    TEXT,
    created_at    TEXT NOT NULL,
    expires_at    TEXT,
    updated_at    TEXT NOT NULL,
    UNIQUE (platform, server_id, number)
);
CREATE INDEX cases_member ON cases (platform, server_id, member_id, number);
CREATE INDEX cases_message ON cases (platform, server_id, message_id) WHERE message_id IS NOT NULL;
CREATE INDEX cases_created ON cases (platform, server_id, created_at);

CREATE TABLE strikes (
    id            INTEGER PRIMARY KEY,
    platform      TEXT NOT NULL,
    server_id     TEXT NOT NULL,
    member_id     TEXT NOT NULL,
    points        INTEGER NOT NULL CHECK (points > 0),
    reason        TEXT NOT NULL DEFAULT '',
    message_id    TEXT,                -- NULL for manual strikes
    case_number   INTEGER,
    created_at    TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    pardoned_at   TEXT,
    pardoned_by   TEXT,
    FOREIGN KEY (platform, server_id, case_number) REFERENCES cases (platform, server_id, number)
);
-- One message never earns two strikes.
CREATE UNIQUE INDEX strikes_one_per_message ON strikes (platform, server_id, message_id)
    WHERE message_id IS NOT NULL;
CREATE INDEX strikes_member ON strikes (platform, server_id, member_id, expires_at);
CREATE INDEX strikes_case ON strikes (platform, server_id, case_number) WHERE case_number IS NOT NULL;

CREATE TABLE review_items (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    platform         TEXT NOT NULL,
    server_id        TEXT NOT NULL,
    case_number      INTEGER,
    message_id       TEXT,
    channel_id       TEXT,
    member_id        TEXT NOT NULL,
    source           TEXT NOT NULL CHECK (source IN ('automod', 'report', 'appeal')),
    reason           TEXT NOT NULL DEFAULT '',
    scores           TEXT NOT NULL DEFAULT '{}',
    decision         TEXT NOT NULL DEFAULT 'open' CHECK (decision IN
                        ('open', 'dismissed', 'deleted', 'warned', 'timed_out', 'kicked', 'banned', 'investigating')),
    moderator_id     TEXT,
    decided_at       TEXT,
    card_message_id  TEXT,
    created_at       TEXT NOT NULL,
    FOREIGN KEY (platform, server_id, case_number) REFERENCES cases (platform, server_id, number)
);
CREATE INDEX review_queue ON review_items (platform, server_id, decision, id);
CREATE INDEX review_case ON review_items (platform, server_id, case_number) WHERE case_number IS NOT NULL;
CREATE INDEX review_message ON review_items (platform, server_id, message_id) WHERE message_id IS NOT NULL;
CREATE INDEX review_card ON review_items (card_message_id) WHERE card_message_id IS NOT NULL;
CREATE INDEX review_member ON review_items (platform, server_id, member_id);

CREATE TABLE reports (
    id           INTEGER PRIMARY KEY,
    platform     TEXT NOT NULL,
    server_id    TEXT NOT NULL,
    reporter_id  TEXT NOT NULL,
    member_id    TEXT NOT NULL,
    message_id   TEXT,
    channel_id   TEXT,
    reason       TEXT NOT NULL DEFAULT '',
    review_id    INTEGER REFERENCES review_items (id),
    created_at   TEXT NOT NULL
);
CREATE UNIQUE INDEX reports_once_per_reporter ON reports (platform, server_id, reporter_id, message_id)
    WHERE message_id IS NOT NULL;
CREATE INDEX reports_member ON reports (platform, server_id, member_id);

CREATE TABLE appeals (
    id            INTEGER PRIMARY KEY,
    platform      TEXT NOT NULL,
    server_id     TEXT NOT NULL,
    case_number   INTEGER NOT NULL,
    member_id     TEXT NOT NULL,
    text          TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'upheld', 'overturned')),
    moderator_id  TEXT,
    decided_at    TEXT,
    review_id     INTEGER REFERENCES review_items (id),
    created_at    TEXT NOT NULL,
    FOREIGN KEY (platform, server_id, case_number) REFERENCES cases (platform, server_id, number)
);
-- Only one open appeal per case.
CREATE UNIQUE INDEX appeals_one_open ON appeals (platform, server_id, case_number) WHERE status = 'open';
CREATE INDEX appeals_member ON appeals (platform, server_id, member_id, status);

CREATE TABLE policy_overrides (
    platform    TEXT NOT NULL,
    server_id   TEXT NOT NULL,
    scope       TEXT NOT NULL,   -- 'server', 'channel:<id>', 'category:<id>', 'role:<id>'
    key         TEXT NOT NULL,   -- dotted policy key, e.g. 'labels.insult.review'
    value       TEXT NOT NULL,   -- JSON
    updated_by  TEXT,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (platform, server_id, scope, key)
);

CREATE TABLE policy_changes (
    id            INTEGER PRIMARY KEY,
    platform      TEXT NOT NULL,
    server_id     TEXT NOT NULL,
    scope         TEXT NOT NULL,
    key           TEXT NOT NULL,
    old_value     TEXT,          -- JSON, NULL when there was no override
    new_value     TEXT,          -- JSON, NULL for a reset
    action        TEXT NOT NULL CHECK (action IN ('set', 'reset')),
    moderator_id  TEXT,
    changed_at    TEXT NOT NULL
);
CREATE INDEX policy_changes_server ON policy_changes (platform, server_id, id);

CREATE TABLE raids (
    id           INTEGER PRIMARY KEY,
    platform     TEXT NOT NULL,
    server_id    TEXT NOT NULL,
    channel_id   TEXT NOT NULL,
    started_at   TEXT NOT NULL,
    members      TEXT NOT NULL DEFAULT '[]',  -- JSON [member_id]
    count        INTEGER NOT NULL,
    reason       TEXT NOT NULL,
    recorded_at  TEXT NOT NULL
);
CREATE INDEX raids_server ON raids (platform, server_id, started_at);

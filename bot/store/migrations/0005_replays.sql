-- 0005: replays. A scan of already-recorded messages under another policy version re-judges them from their
-- stored scores and keeps this second verdict set next to the first (the first stays in `verdicts`, which the
-- bots and the mod log use). One row per message and policy version; a replay of the same version replaces
-- its rows (idempotent).

CREATE TABLE replay_verdicts (
    platform        TEXT NOT NULL,
    server_id       TEXT NOT NULL,
    message_id      TEXT NOT NULL,
    policy_version  TEXT NOT NULL,
    member_id       TEXT NOT NULL,
    channel_id      TEXT NOT NULL,
    scores          TEXT,                       -- JSON {label: score|null} or NULL when not scored
    rule_hits       TEXT NOT NULL DEFAULT '[]', -- JSON [{rule, detail, label, action}]
    labels          TEXT NOT NULL DEFAULT '[]', -- JSON [label]
    flagged         INTEGER NOT NULL DEFAULT 0 CHECK (flagged IN (0, 1)),
    action          TEXT NOT NULL DEFAULT 'none',
    strike_points   INTEGER NOT NULL DEFAULT 0,
    exempt          TEXT,
    model_name      TEXT NOT NULL DEFAULT '',
    model_version   TEXT,
    raid_mode       INTEGER NOT NULL DEFAULT 0 CHECK (raid_mode IN (0, 1)),
    judged_at       TEXT NOT NULL,
    PRIMARY KEY (platform, server_id, message_id, policy_version)
);
CREATE INDEX replay_verdicts_version ON replay_verdicts (platform, server_id, policy_version);

-- What a policy version scored (its [scoring] pieces: "sentences" or "whole"), so stored scores are reused only
-- for the same scoring plan. The version is a hash of the whole policy, so this never changes for a version.
CREATE TABLE policy_versions (
    version         TEXT PRIMARY KEY,
    scoring_pieces  TEXT NOT NULL,
    first_seen      TEXT NOT NULL
);

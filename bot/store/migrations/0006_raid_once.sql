-- 0006: one raid per burst across processes. A burst is (platform, server_id, channel_id, started_at, reason);
-- two bot processes on one database used to record it twice. Duplicates already recorded are folded into the
-- first one: its members gain the members only a later copy's window saw (the first copy's in their order, then
-- each later copy's new ones in theirs), it takes a later copy's card when it has none, and raid mode rows
-- pointing at a later copy are pointed at the first; the later copies are deleted, then a unique index keeps it
-- so. (Before this fold, the later copies' members and card were dropped; a database already past version 6
-- keeps what that version left, as migrations run by version.)
UPDATE raids SET
    members = (
        SELECT json_group_array(value) FROM (
            SELECT j.value AS value FROM raids r2, json_each(r2.members) j
            WHERE r2.platform = raids.platform AND r2.server_id = raids.server_id
                AND r2.channel_id = raids.channel_id AND r2.started_at = raids.started_at
                AND r2.reason = raids.reason
            GROUP BY j.value
            ORDER BY MIN(printf('%020d %010d', r2.id, j.key)))),
    card_message_id = COALESCE(card_message_id, (
        SELECT r2.card_message_id FROM raids r2
        WHERE r2.platform = raids.platform AND r2.server_id = raids.server_id
            AND r2.channel_id = raids.channel_id AND r2.started_at = raids.started_at AND r2.reason = raids.reason
            AND r2.card_message_id IS NOT NULL
        ORDER BY r2.id LIMIT 1))
WHERE id IN (SELECT MIN(id) FROM raids GROUP BY platform, server_id, channel_id, started_at, reason
             HAVING COUNT(*) > 1);
UPDATE raid_modes SET raid_id = (
    SELECT MIN(r2.id) FROM raids r1 JOIN raids r2 ON r2.platform = r1.platform AND r2.server_id = r1.server_id
        AND r2.channel_id = r1.channel_id AND r2.started_at = r1.started_at AND r2.reason = r1.reason
    WHERE r1.id = raid_modes.raid_id)
WHERE raid_id IS NOT NULL;
DELETE FROM raids WHERE id NOT IN (
    SELECT MIN(id) FROM raids GROUP BY platform, server_id, channel_id, started_at, reason);
CREATE UNIQUE INDEX raids_burst ON raids (platform, server_id, channel_id, started_at, reason);

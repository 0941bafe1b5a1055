-- 0006: one raid per burst across processes. A burst is (platform, server_id, channel_id, started_at, reason);
-- two bot processes on one database used to record it twice. Duplicates already recorded are folded into the
-- first one (raid mode rows pointing at a later copy are pointed at the first), then a unique index keeps it so.
UPDATE raid_modes SET raid_id = (
    SELECT MIN(r2.id) FROM raids r1 JOIN raids r2 ON r2.platform = r1.platform AND r2.server_id = r1.server_id
        AND r2.channel_id = r1.channel_id AND r2.started_at = r1.started_at AND r2.reason = r1.reason
    WHERE r1.id = raid_modes.raid_id)
WHERE raid_id IS NOT NULL;
DELETE FROM raids WHERE id NOT IN (
    SELECT MIN(id) FROM raids GROUP BY platform, server_id, channel_id, started_at, reason);
CREATE UNIQUE INDEX raids_burst ON raids (platform, server_id, channel_id, started_at, reason);

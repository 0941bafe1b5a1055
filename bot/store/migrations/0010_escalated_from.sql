-- 0010: an escalation case (a ladder step the strike of another case crossed) names that case, so overturning or
-- pardoning the case that crossed the step also lifts the step (a timeout or a temporary ban it set off).
-- escalated_from: NULL for every other case; else the number of the case (same platform and server) whose strike
-- crossed the step.
ALTER TABLE cases ADD COLUMN escalated_from INTEGER;

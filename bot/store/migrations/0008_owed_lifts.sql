-- 0008: a ban overturned (on appeal, or a dismissed review) whose unban the platform refused is retried.
-- lift_tries: NULL while no lift is owed; else how many times lifting the overturned ban was tried and refused.
-- A case with lift_tries set and lifted_at NULL still owes its unban.
ALTER TABLE cases ADD COLUMN lift_tries INTEGER;

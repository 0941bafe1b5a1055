-- 0004: how far the model read each judged message (Verdict.score_status) and the language found, if any.
-- "ok", "not_scored", "scorer_error", "unsupported_language" (language: ISO 639-1 code) or "truncated" (past the
-- policy's [scoring] max_chars). Rows written before this migration read "ok" / NULL.
ALTER TABLE verdicts ADD COLUMN score_status TEXT NOT NULL DEFAULT 'ok';
ALTER TABLE verdicts ADD COLUMN language TEXT;

"""break31: ``MODBOT_CHECKPOINT`` is ignored while ``MODBOT_SCORER_URL`` is set (the service chooses its model,
:func:`bot.runtime.check_model`), so a checkpoint path that does not exist must not stop a re-scan of a mod log."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_rescan_through_a_scoring_service_ignores_a_missing_checkpoint(tmp_path, fake_scorer_url):
    """The first scan records the message; the second one (same mod log, a ``MODBOT_CHECKPOINT`` naming no file)
    exits 0 as the first did, instead of ``error: file not found`` and exit 2 (the checkpoint was hashed for the
    stored-score identity although the remote scorer never reads it)."""
    src = tmp_path / "c.jsonl"
    src.write_text('{"id": "a", "text": "hi", "author": "u", "created_at": "2026-01-01T00:00:00Z"}\n',
                   encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODBOT_")}
    env.update(MODBOT_SCORER_URL=fake_scorer_url, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    cmd = [sys.executable, "-m", "bot", "scan", str(src), "--db", str(tmp_path / "mod.db"), "--no-progress"]
    first = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    env["MODBOT_CHECKPOINT"] = str(tmp_path / "missing.ckpt")
    again = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "file not found" not in again.stderr

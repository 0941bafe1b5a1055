"""Log levels (-v, -vv), the ready line at the default level, and JSON lines for log collectors."""

from __future__ import annotations

import json
import logging

import pytest

from bot.cli import build_parser
from bot.logs import READY_LOGGER, level_for, setup_logging


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in handlers:
        root.addHandler(h)
    root.setLevel(level)
    logging.getLogger("bot.ingest").setLevel(logging.NOTSET)
    logging.getLogger(READY_LOGGER).setLevel(logging.NOTSET)


def emit_all() -> None:
    logging.getLogger("bot.x").debug("debug line")
    logging.getLogger("bot.x").info("info line")
    logging.getLogger("bot.x").warning("warning line")
    logging.getLogger(READY_LOGGER).info("discord bot ready in 1 server")


@pytest.mark.parametrize(("flags", "count"), [([], 0), (["-v"], 1), (["-vv"], 2), (["-v", "-v", "-v"], 3)])
def test_v_flags_count(flags, count):
    """-v may be repeated; the parser counts it (0 without)."""
    args = build_parser().parse_args([*flags, "policy", "check"])
    assert args.verbose == count and args.log_format == "text"


def test_levels_warning_info_debug():
    """No -v: WARNING; -v: INFO; -vv and more: DEBUG."""
    assert [level_for(n) for n in (0, 1, 2, 5)] == [logging.WARNING, logging.INFO, logging.DEBUG, logging.DEBUG]


def test_default_shows_warnings_and_the_ready_line_only(capsys, restore_logging):
    """At the default level warnings show with their level and the ready line shows alone; INFO and DEBUG don't."""
    setup_logging(0)
    emit_all()
    err = capsys.readouterr().err.splitlines()
    assert err == ["WARNING: warning line", "discord bot ready in 1 server"]


def test_v_shows_info_and_vv_debug(capsys, restore_logging):
    """-v adds INFO lines (with time and logger); -vv adds DEBUG."""
    setup_logging(1)
    emit_all()
    err = capsys.readouterr().err
    assert "INFO bot.x: info line" in err and "debug line" not in err
    setup_logging(2)
    emit_all()
    assert "DEBUG bot.x: debug line" in capsys.readouterr().err


def test_json_lines_carry_level_logger_extra_and_exception(capsys, restore_logging):
    """--log-format json writes one JSON object per line with UTC time, level, logger, message, extra fields
    and the traceback."""
    setup_logging(0, "json")
    log = logging.getLogger("bot.adapters.x")
    log.warning("card failed for %s", "case 3", extra={"server": "123"})
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("crashed")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2
    first, second = (json.loads(ln) for ln in lines)
    assert first["level"] == "WARNING" and first["logger"] == "bot.adapters.x"
    assert first["message"] == "card failed for case 3" and first["server"] == "123"
    assert first["time"].endswith("+00:00")
    assert second["level"] == "ERROR" and "ValueError: boom" in second["exception"]


def test_unknown_log_format_is_refused(restore_logging):
    """A format other than text or json is a ValueError naming the choices."""
    with pytest.raises(ValueError, match="text, json"):
        setup_logging(0, "xml")

"""Hostile-tester findings on the command line (round 16)."""

from __future__ import annotations

import pytest

from bot.cli import main


@pytest.mark.parametrize(("argv", "names"), [
    (["--model", "multilingual", "serve"], ["--model", "MODBOT_MODEL=multilingual"]),
    (["-v", "serve", "--port", "0"], ["-v"]),
    (["--log-format", "json", "serve"], ["--log-format"]),
    (["--int8", "serve"], ["--int8", "MODBOT_INT8=1"]),
    (["--model", "bogus", "bench"], ["--model", "bench"]),
    (["-vv", "bench", "--messages", "10"], ["-vv"]),
])
def test_a_global_option_before_serve_or_bench_is_refused_in_one_line(capsys, argv, names):
    """``serve`` and ``bench`` parse their own options: a ``python -m bot`` option written before them (the README's
    ``python -m bot [--model NAME] COMMAND``) was dropped (exit 1 with no word for ``--model X serve``, argparse's
    "unrecognized arguments: --port" for ``-v serve --port 0``, the default model benchmarked for ``--model X
    bench``). It is refused with exit 2 and one line naming the option and what to do instead, before any model
    loads."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for name in names:
        assert name in lines[0], lines[0]

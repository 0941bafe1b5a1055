"""What the dataset modules of the quality harness share: scoring as the bot scores, the issue's targets, the
benign padding sentences, accuracy and formatting helpers, and the paired comparison's rows and table.

Every text is scored as the bot scores a message (:func:`bot.core.pieces.score_texts`, the moderation service's own
scoring path: ``for_scoring``, then the whole text and each sentence, highest score per label).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from bot.core.ports import Scorer
from bot.eval.errors import EvalInputError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

#: Columns a table may take when the output is not a terminal (a pipe, a file): far more than any table of the
#: harness needs (the widest, "wrong cases", is about 200), so each table takes its natural width.
PIPED_WIDTH = 1000


def table_console(file: IO[str] | None = None, *, soft_wrap: bool = False) -> Console:
    """The console the quality harness, ``scan``'s summary and the benchmarks print their tables on (``file``;
    ``None``: stdout; ``soft_wrap``: rich's, plain lines never wrapped either).

    On a terminal it is rich's own (the terminal's width). Anywhere else (``... | less``, ``> eval.log``, a test's
    stream) rich would take 80 columns and wrap a long row over several lines; there it is :data:`PIPED_WIDTH`
    columns wide, so every table is printed at the width that fits it, one row per line (no colour codes either:
    rich writes none where it finds no terminal).
    """
    from rich.console import Console

    console = Console(file=file, soft_wrap=soft_wrap)
    return console if console.is_terminal else Console(file=file, width=PIPED_WIDTH, soft_wrap=soft_wrap)


#: Characters a terminal reads as commands (C0 controls, DEL, C1 controls: ESC starts ANSI and OSC 8 sequences,
#: CR overwrites the line): never written as they are from a member's words (:func:`plain`).
_TERMINAL_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def plain(value: object) -> Text:
    """``value`` as rich text for a terminal, exactly as written: no rich markup read from it (a member named
    ``[/b]`` or ``[link=...]`` is shown so, neither crashing the print nor making a hyperlink) and every control
    character shown as U+FFFD (a tab or line break as a space), so no escape sequence of a member's name or text
    reaches the terminal."""
    from rich.text import Text

    text = "" if value is None else str(value)
    return Text(_TERMINAL_CONTROL.sub(lambda m: " " if m.group() in "\t\n" else "\ufffd", text))


#: Targets of issue 26 (HateCheck dev split, OLID hold-out; docs/model-card.md keeps older ones beside old tables); printed next to the measured numbers, never lowered
#: in code. ``functionality`` is the floor for every HateCheck functionality.
TARGETS = {"overall": 0.88, "hateful": 0.88, "non_hateful": 0.88, "counter_quote_nh": 0.90, "counter_ref_nh": 0.90,
           "trans_non_hateful": 0.90, "functionality": 0.70, "olid_macro_f1": 0.78}


#: Benign chat lines written by this project for ``--pad``: one is put before each HateCheck case to measure whether
#: a harmless sentence in front of an attack hides it (round-robin, so the run is deterministic).
PAD_SENTENCES = (
    "Morning all, the build finally passed on the second try.",
    "I just got back from the grocery store and it was packed.",
    "Has anyone tried the new patch yet? The loading times look better.",
    "We're meeting at the usual place around seven tonight.",
    "Thanks for the link, I'll read it after lunch.",
    "My cat knocked the coffee off my desk again this morning.",
    "The stream starts in ten minutes, grab a snack.",
    "I spent the weekend repainting the kitchen and I'm exhausted.",
    "Quick reminder that the poll closes on Friday.",
    "Nice screenshot, what settings are you running?",
    "Traffic was terrible today so I'm late to the call.",
    "That recipe turned out great, I added a bit more garlic.",
    "Can someone pin the rules message in this channel?",
    "I finally beat the second boss after twenty attempts.",
    "The weather here has been grey and rainy all week.",
    "Welcome back, we missed you in voice chat yesterday.",
)


def padded(texts: Sequence[str]) -> list[str]:
    """Each text after one benign sentence of :data:`PAD_SENTENCES` (round-robin), separated by a space."""
    return [f"{PAD_SENTENCES[i % len(PAD_SENTENCES)]} {t}" for i, t in enumerate(texts)]


def _default_threshold(label: str) -> float:
    from bot.model.artifact import read_thresholds

    try:
        return read_thresholds()[label]
    except (OSError, KeyError, ValueError):
        return 0.5


def _score(scorer: Scorer, texts: Sequence[str], label: str, batch_size: int, *, pieces: bool = True) -> list[float]:
    """``label``'s score per raw text, through :func:`bot.core.pieces.score_texts` (the moderation service's own
    scoring path); ``pieces=False`` scores the whole text only (the policy's ``[scoring] pieces = "whole"``).

    Raises:
        EvalInputError: a text is empty after normalisation (the bot would not score it).
        ValueError: the scorer lacks ``label``.
    """
    from bot.core.pieces import score_texts

    out: list[float] = []
    step = batch_size * 16
    for s in range(0, len(texts), step):
        chunk = texts[s : s + step]
        for i, sc in enumerate(score_texts(scorer, chunk, "sentences" if pieces else "whole")):
            if sc is None:
                raise EvalInputError(f"case {s + i + 1} has no text to score")
            v = sc.get(label)
            if v is None:
                raise ValueError(f"scorer {scorer.name} has no {label!r} label")
            out.append(v)
    return out


def _acc(pairs: list[tuple[bool, bool]]) -> float | None:
    return sum(p == g for p, g in pairs) / len(pairs) if pairs else None


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def artifact_threshold(artifact_dir: Path, label: str) -> float:
    """``label``'s calibrated decision threshold in [0, 1] from an artifact directory's ``thresholds.json`` (the
    one ``python -m bot.training --out DIR`` writes): how ``eval olid --artifact/--baseline DIR`` judges each model
    at its own calibrated threshold, not the shipped model's.

    Raises:
        EvalInputError: the file is missing or unreadable, lacks ``label``, or its value is outside [0, 1] (naming
            the file).
    """
    from bot.model.artifact import THRESHOLDS_FILE, read_thresholds

    f = Path(artifact_dir) / THRESHOLDS_FILE
    try:
        value = read_thresholds(Path(artifact_dir))[label]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EvalInputError(f"{f}: no calibrated {label} threshold ({type(exc).__name__}: {exc})") from None
    if not 0.0 <= value <= 1.0:
        raise EvalInputError(f"{f}: the {label} threshold {value} is outside [0, 1]")
    return value


class _Remembered:
    """A scorer that keeps every text's :class:`Scores` for the rest of one evaluation, so a text scored for the
    candidate's tables is not scored again for the paired comparison (same model, same text: same scores).

    ``name``, ``version``, ``labels`` and ``languages`` are the wrapped scorer's as it reported them after its latest
    batch (a scoring service's are learnt from its answers), not as they were when the evaluation began."""

    def __init__(self, scorer: Scorer) -> None:
        self._scorer = scorer
        self._known: dict[str, object] = {}
        self._report()

    def _report(self) -> None:
        self.name, self.version, self.labels = self._scorer.name, self._scorer.version, self._scorer.labels
        self.languages = getattr(self._scorer, "languages", None)

    def score_batch(self, texts: Sequence[str]) -> list:
        todo = list(dict.fromkeys(t for t in texts if t not in self._known))
        if todo:
            self._known.update(zip(todo, self._scorer.score_batch(todo), strict=True))
            self._report()  # a scoring service names its model in each answer
        return [self._known[t] for t in texts]


def model_source(scorer: Scorer) -> dict[str, str]:
    """The model a table set measures, as ``scorer`` reports it, said for a person.

    Returns:
        ``{"name": str, "version": str, "text": str}``: the scorer's ``name`` and ``version`` (for the embedded
        model or an artifact directory, the manifest's ``name`` and the first 12 hex digits of its
        ``delta_sha256``; a named detoxify model's package version; a scoring service's as it answers
        ``GET /v1/model``), ``text`` e.g. ``"model embedded-minilm-v1, version 6be930fdb033"``.
    """
    name, version = str(scorer.name), str(scorer.version)
    return {"name": name, "version": version, "text": f"model {name}, version {version}"}


def print_model(title: str, scorer: Scorer, console) -> dict[str, str]:
    """Print ``"<title>: model <name>, version <version>"`` (:func:`model_source`) as one plain line (no markup, never
    wrapped) above a table set; returns :func:`model_source`."""
    model = model_source(scorer)
    console.print(f"{title}: {model['text']}", markup=False, highlight=False, soft_wrap=True)
    return model


def _paired_row(name: str, a: list[bool], b: list[bool]) -> dict:
    from bot.eval.paired import accuracy_stat, mcnemar, paired_bootstrap

    test = mcnemar(a, b)
    ci = paired_bootstrap(a, b, accuracy_stat)
    return {"name": name, "n": len(a), "a": accuracy_stat(range(len(a)), a), "b": accuracy_stat(range(len(b)), b),
            "diff": ci.diff, "low": ci.low, "high": ci.high, "only_a": test.only_a, "only_b": test.only_b,
            "p_value": test.p_value}


def print_paired(title: str, rows: list[dict], console, *, models: tuple[Scorer, Scorer] | None = None) -> None:
    """One table: per metric, A's and B's value, B - A with its paired bootstrap 95% interval, the discordant
    counts and McNemar's exact p-value. A difference whose interval contains 0 is printed as such. With ``models``
    (``(baseline, candidate)``), first one plain line naming each: ``"A = baseline: model base, version 1a2b...; B =
    candidate: model cand, version 3c4d..."`` (:func:`model_source`)."""
    from rich.table import Table

    if models is not None:
        a, b = (model_source(s)["text"] for s in models)
        console.print(f"A = baseline: {a}; B = candidate: {b}", markup=False, highlight=False, soft_wrap=True)

    t = Table(title=f"{title}: paired comparison, A = baseline, B = candidate")
    for col in ("metric", "n", "A %", "B %", "B - A (points)", "95% interval", "only A right", "only B right",
                "McNemar p"):
        t.add_column(col, justify="right" if col != "metric" else "left")
    for r in rows:
        p = r.get("p_value")
        t.add_row(r["name"], str(r["n"]), f"{100 * r['a']:.1f}", f"{100 * r['b']:.1f}", f"{100 * r['diff']:+.1f}",
                  f"[{100 * r['low']:+.1f}, {100 * r['high']:+.1f}]", str(r.get("only_a", "-")),
                  str(r.get("only_b", "-")), "-" if p is None else f"{p:.3g}")
    console.print(t)

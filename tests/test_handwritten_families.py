"""The hand-written generator split into families (issue 26): its output is byte-identical to the generator it
replaced, for every switch, checked by hashing the generated rows (text, target, source, in order).

The hashes were computed from the single-function generator at commit ddad7fb (before the split); the shipped
model's training data depends on these rows, so a change here changes what ``python -m bot.training`` builds.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from bot.training.data import Example
from bot.training.handwritten import generate, scene_families


def rows_digest(rows: list[Example]) -> tuple[int, str]:
    """``(row count, sha256 hex)`` of ``rows`` in order: each row as the JSON ``[text, target, source]`` + newline."""
    d = hashlib.sha256()
    for e in rows:
        d.update(json.dumps([e.text, list(e.target), e.source]).encode())
        d.update(b"\n")
    return len(rows), d.hexdigest()


@pytest.mark.parametrize(("kwargs", "count", "digest"), [
    ({"seed": 13}, 10_876, "e3c80b730ff627cb127fb34c9078b79fd9ba4391f731bb62d2d94fb577e03ba6"),
    ({"seed": 13, "stance_families": True}, 14_550,
     "c6484a55f60bfc1e9aaaab7a5b003d9e05e409cea9e2d0112c94676b61580e70"),
    ({"seed": 13, "scene": True}, 12_756, "e007ad9d534953a0148de144ca8a0ac01e33153c6c8d0664566793a8b6d50b4f"),
    ({"seed": 5, "per_template": 3, "stance_families": True, "scene": True}, 16_162,
     "85fd5f072c7fc46807945336bd4f4208f8538e2c4d8c3f7985ea99c5df678e4e"),
])
def test_generate_output_is_byte_identical_to_the_unsplit_generator(kwargs, count, digest):
    """generate() yields the same rows, in the same order, with the same labels and sources as before the split."""
    assert rows_digest(generate(**kwargs)) == (count, digest)


@pytest.mark.parametrize(("seed", "count", "digest"), [
    (13, 1_880, "13b0d77d8596c0e6d4c858c0b7e226ab821d099d4a97f09574d74cc21ab2afd0"),
    (2, 1_855, "a4172306fa1a7bf1e95123dc825913d1d19b549757694413565f24039a679ec2"),
])
def test_scene_families_output_is_byte_identical_to_the_unsplit_function(seed, count, digest):
    """scene_families() yields the same rows as before the split (the fast loop's ``scene`` families)."""
    assert rows_digest(scene_families(seed)) == (count, digest)


def test_digest_sees_a_changed_label():
    """The digest is not blind to labels: the same texts with one target changed hash differently."""
    rows = generate(13)[:50]
    changed = [*rows[:-1], Example(rows[-1].text, tuple(1.0 - (v or 0.0) for v in rows[-1].target), rows[-1].source)]
    assert rows_digest(rows) != rows_digest(changed)

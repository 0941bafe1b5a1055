"""Weight averaging of fast-loop candidates (issue 26): one candidate from several seeds of one recipe.

``python -m bot.training.soup --out DIR CANDIDATE CANDIDATE [CANDIDATE ...]``

Why: the fast loop's candidates differ more between seeds than between recipes (docs/model-card.md: recipe Q's
four seeds moved HateCheck's counter-speech by quote by +1.6, -0.8, -3.9 and -5.5 points, and the bundled example
"trans women are men in dresses" from identity_attack 0.97 to 0.73), so a single seed ships or fails by luck.
Every fast-loop candidate is fine-tuned from the same shipped student for one epoch, so the candidates lie in one
basin and their weights can be averaged ("model soup", Wortsman et al. 2022, *Model soups: averaging weights of
multiple fine-tuned models improves accuracy without increasing inference time*): the average keeps what the seeds
agree on and damps what one seed learnt by chance, at no cost per message (one model, same size).

The soup is the uniform mean, tensor by tensor, of the members' full fp32 state dicts
(:func:`bot.model.artifact.rebuild_state_dict`), stored as any artifact (int8 deltas against the package weights,
:func:`bot.model.artifact.write_artifact`). Its thresholds are calibrated as the fast loop's are (max F1 per
label, :func:`bot.training.train.calibrate`) but on the recipe's dev split alone: each member held out a different
10% of its new rows, so every new row was trained on by some member and none is a fair dev row for the soup.

``--base-weight W`` mixes the base artifact back in (the soup's weights become ``(1 - W) x mean + W x base``;
"WiSE-FT", Wortsman et al. 2022, *Robust fine-tuning of zero-shot models*): a knob between what the fine-tunes
learnt and the shipped model's behaviour elsewhere (real chat's flag rates), default 0.

Like the fast loop, the soup is built in ``<out>.partial`` and moved to ``<out>`` only when complete; ``--out``
is refused where the fast loop refuses it (the shipped artifact, a member, a folder holding either).
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path

from bot.model import artifact as art
from bot.training.pools import publish
from bot.training.train import DEFAULT_DATA, TrainConfig, build_examples, calibrate, check_data_root, contains

log = logging.getLogger(__name__)


def check_members(members: list[Path]) -> list[dict]:
    """The members' manifests, once they are known to be averageable.

    Raises:
        ValueError: fewer than two members, one named twice, a folder that is not a model artifact, members with
            other label sets or other base packages, or members not fine-tuned from the same base artifact
            (``meta.base``; a soup of models from different starting weights is not one basin).
    """
    if len(members) < 2:
        raise ValueError("a soup needs at least two candidates")
    if len({m.resolve() for m in members}) != len(members):
        raise ValueError("a candidate is named twice")
    manifests = []
    for m in members:
        if not (m / art.DELTA_FILE).is_file():
            raise ValueError(f"{m}: not a model artifact directory (no {art.DELTA_FILE})")
        manifests.append(art.read_manifest(m))
        if manifests[-1].get("meta", {}).get("base") is None:
            raise ValueError(f"{m}: not a fast-loop candidate (its manifest names no base artifact)")
    for what, get in (("labels", lambda mf: mf.get("labels")), ("base package weights", lambda mf: mf.get("base_sha256")),
                      ("base artifact (meta.base)", lambda mf: mf.get("meta", {}).get("base"))):
        seen = {json.dumps(get(mf)) for mf in manifests}
        if len(seen) != 1:
            raise ValueError(f"the candidates differ in their {what}: {sorted(seen)}")
    return manifests


def average_state(members: list[Path]) -> dict:
    """Uniform mean of the members' rebuilt fp32 state dicts, key by key.

    Raises:
        ValueError: the members' tensors differ in names or shapes.
    """
    total: dict | None = None
    for m in members:
        sd = art.rebuild_state_dict(m)
        if total is None:
            total = {k: v.detach().double().clone() for k, v in sd.items()}
            continue
        if set(sd) != set(total):
            raise ValueError(f"{m}: its tensors differ from {members[0]}'s: {sorted(set(sd) ^ set(total))[:5]}")
        for k, v in sd.items():
            if v.shape != total[k].shape:
                raise ValueError(f"{m}: tensor {k} has shape {tuple(v.shape)}, not {tuple(total[k].shape)}")
            total[k] += v.double()
    assert total is not None
    return {k: (v / len(members)).float() for k, v in total.items()}


def _check_out(out: Path, members: list[Path]) -> None:
    for what, folder in [("the shipped artifact", art.ARTIFACT_DIR)] + [(f"the candidate {m}", m) for m in members]:
        if contains(out, folder) or contains(folder, out):
            raise ValueError(f"--out {out}: a soup never writes {what} or a folder holding it or inside it")
    if out.is_dir() and any(out.iterdir()) and not (out / "fast.json").is_file():
        raise ValueError(f"--out {out}: a folder that is not a candidate (no fast.json); a soup replaces --out whole")


def mix_base(state: dict, base: Path, weight: float) -> dict:
    """``(1 - weight) x state + weight x base``'s rebuilt state dict, key by key.

    Raises:
        ValueError: ``weight`` outside [0, 1), or the base's tensors differ from ``state``'s.
    """
    if not 0 <= weight < 1:
        raise ValueError(f"--base-weight must be in [0, 1), not {weight}")
    if weight == 0:
        return state
    sd = art.rebuild_state_dict(base)
    if set(sd) != set(state) or any(sd[k].shape != v.shape for k, v in state.items()):
        raise ValueError(f"{base}: its tensors differ from the candidates'")
    return {k: ((1 - weight) * v.double() + weight * sd[k].double()).float() for k, v in state.items()}


def check_base(manifests: list[dict], base: Path, base_weight: float) -> None:
    """Refuse mixing ``base`` back in (``base_weight`` > 0) when it is not the members' base artifact.

    Raises:
        ValueError: ``base``'s id (its ``delta_sha256``'s first 12 hex digits) is not the members' ``meta.base``
            (they were fine-tuned from an earlier shipped model, say).
    """
    if base_weight and art.read_manifest(base)["delta_sha256"][:12] != manifests[0]["meta"]["base"]:
        raise ValueError(f"--base-weight: {base} is not the candidates' base artifact {manifests[0]['meta']['base']}")


def make_soup(members: list[Path], out: Path, recipe: TrainConfig | None = None, *,
              dev: list | None = None, base_weight: float = 0.0, base: Path = art.ARTIFACT_DIR) -> dict:
    """Average ``members`` into the artifact ``out``; returns the report (also ``out/fast.json``).

    ``base_weight`` of ``base`` (the members' base artifact, checked against their ``meta.base``) is mixed back
    in (:func:`mix_base`). ``dev`` replaces the recipe's dev split for calibration (tests pass a tiny one); default the dev half of
    :func:`bot.training.train.build_examples` of ``recipe``.

    Raises:
        ValueError: see :func:`check_members`, :func:`check_base` and the ``--out`` rules in the module
            docstring.
    """
    t0 = time.monotonic()
    out, members = Path(out), [Path(m) for m in members]
    manifests = check_members(members)
    _check_out(out, members)
    rc = recipe or TrainConfig()
    check_base(manifests, base, base_weight)
    state = mix_base(average_state(members), base, base_weight)
    staging = Path(f"{out}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    member_ids = [mf["delta_sha256"][:12] for mf in manifests]
    seeds = [mf.get("meta", {}).get("seed") for mf in manifests]
    meta = dict(manifests[0].get("meta", {}))
    meta.pop("seed", None)
    manifest = art.write_artifact(state, tuple(manifests[0]["labels"]), staging, **meta, soup=member_ids, seeds=seeds,
                                   **({"base_weight": base_weight} if base_weight else {}))
    dev_rows = dev if dev is not None else build_examples(rc)[1]
    thresholds, dev_report = calibrate(replace(rc, out=staging), list(dev_rows))
    (staging / art.THRESHOLDS_FILE).write_text(
        json.dumps({"thresholds": thresholds, "source": "max-F1 on the recipe's 10% dev split (a soup's members "
                    "held out different new rows, so none is used)", "dev": dev_report}, indent=2) + "\n",
        encoding="utf-8")
    report = {"soup": member_ids, "seeds": seeds, "base_weight": base_weight, "members": [str(m) for m in members], "dev_rows": len(dev_rows),
              "total_seconds": round(time.monotonic() - t0), "delta_sha256": manifest["delta_sha256"],
              "thresholds": thresholds}
    return publish(staging, out, report)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, build one soup; returns the exit status (2 with a one-line error for bad input)."""
    p = argparse.ArgumentParser(prog="python -m bot.training.soup", description=__doc__.split("\n\n")[0])
    p.add_argument("members", nargs="+", type=Path, help="fast-loop candidate artifact directories (two or more)")
    p.add_argument("--out", type=Path, required=True, help="soup artifact directory (never bot/model/artifact)")
    p.add_argument("--base-weight", type=float, default=0.0,
                   help="share of the members' base artifact (the shipped model) mixed back in, in [0, 1); default 0")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared data root, for the recipe's dev split (default ../shared/data)")
    args = p.parse_args(argv)
    try:
        manifests = check_members(args.members)
        _check_out(args.out, args.members)
        if not 0 <= args.base_weight < 1:
            raise ValueError(f"--base-weight must be in [0, 1), not {args.base_weight}")
        check_data_root(args.data)
        check_base(manifests, art.ARTIFACT_DIR, args.base_weight)
    except ValueError as exc:
        print(f"error: soup: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    make_soup(args.members, args.out, replace(TrainConfig(), data=args.data), base_weight=args.base_weight)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

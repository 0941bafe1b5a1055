"""Which numeric precision the embedded model runs in on ONNX Runtime, chosen at start and only where a paired
check showed verdicts unchanged.

Precisions:

- ``fp32``: the checked export (:mod:`bot.scoring.onnx_scorer`), scores equal to detoxify's; always available.
- ``int8``: the same export with ONNX Runtime's dynamic quantisation (``onnxruntime.quantization.quantize_dynamic``:
  int8 weights per output channel, activations quantised on the fly; ``MatMulInteger`` kernels use AVX-512 VNNI /
  AVX-VNNI) of the MatMuls :data:`INT8_RECIPE` names (:data:`INT8_RECIPES`: by default only the encoder's
  feed-forward blocks, two thirds of its weights; attention, pooler and classifier stay fp32), cached beside it as
  :data:`INT8_FILE` with its sha256. Offered only on a CPU with VNNI.
- ``bf16`` is not offered on ONNX Runtime: its CPU provider has no bf16 matrix kernels on x86 (bf16 autocast is a
  torch feature: ``MODBOT_RUNTIME=torch MODBOT_BF16=1``).

:func:`paired_check` scores the same texts with the fp32 scorer and a candidate through the bot's own path
(:func:`bot.core.pieces.score_texts`: whole text, sentence pieces, windows) and compares the flag of every
(text, label, policy tier): the ``review`` and ``act`` tier of each label in ``[thresholds]`` and the identity
check's untargeted tier. It passes only when **no** flag changes (McNemar's exact test is printed beside the count;
a precision that changes verdicts is refused even when the change is not significant). ``python -m bot bench
precision`` runs it on real chat and HateCheck's dev split and records the result in the export's ``ONNX.json``;
:func:`choose` then picks, at start, the fastest precision whose recorded check passed for this model file on this
kind of CPU, else fp32, and says why (``MODBOT_PRECISION=auto|fp32|int8`` or ``--precision`` overrides).

Layer: ``bot.scoring``. The check needs only scorers and a policy; quantisation needs ``onnxruntime`` and ``onnx``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.core.policy import Policy
    from bot.core.ports import Scorer

log = logging.getLogger(__name__)

#: Precisions :func:`choose` knows, fastest first (``fp32`` last: the fallback).
PRECISIONS = ("int8", "fp32")
#: CPU flags (``/proc/cpuinfo``) that give int8 matrix products their fast path.
INT8_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8")
#: CPU flags that matter to the choice; recorded with each check (a check made on one CPU kind is not reused on
#: another).
RELEVANT_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "amx_bf16", "amx_int8")
#: Which weight MatMuls int8 quantises, by recipe name: a pattern their node names (``torch.onnx.export``'s
#: module paths, e.g. ``/bert/encoder/layer.0/intermediate/dense/MatMul``) must match. ``ffn``: each layer's
#: feed-forward block (``intermediate.dense`` and ``output.dense``, not ``attention.output.dense``); ``ffn-in``:
#: only its first MatMul; ``all``: every MatMul with a weight (the whole-model quantisation, which changed verdicts).
INT8_RECIPES = {
    "ffn": r"/layer\.\d+/(intermediate|output)/dense/MatMul$",
    "ffn-in": r"/layer\.\d+/intermediate/dense/MatMul$",
    "all": r".",
}
#: The recipe ``int8`` means (the one ``bench precision`` records and ``auto`` may choose).
INT8_RECIPE = "ffn"
#: The int8 model's file beside ``model.onnx`` (named by recipe, so a file built by another recipe is never reused).
INT8_FILE = f"model.int8-{INT8_RECIPE}.onnx"


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU's feature flags (first ``flags`` line of ``/proc/cpuinfo``); empty where it cannot be read."""
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("flags"):
                return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def cpu_kind(flags: frozenset[str]) -> str:
    """The flags of :data:`RELEVANT_FLAGS` the CPU has, space-separated (``""`` for none): the key a recorded check
    is valid for."""
    return " ".join(f for f in RELEVANT_FLAGS if f in flags)


def not_offered(precision: str, flags: frozenset[str]) -> str | None:
    """Why ``precision`` cannot run fast on this CPU with ONNX Runtime, or ``None`` when it can."""
    if precision == "fp32":
        return None
    if precision == "int8":
        return None if any(f in flags for f in INT8_FLAGS) else "the CPU has no VNNI (avx512_vnni / avx_vnni)"
    if precision == "bf16":
        return "ONNX Runtime has no bf16 CPU kernels on x86 (bf16 is MODBOT_RUNTIME=torch MODBOT_BF16=1)"
    return f"unknown precision {precision!r}"


@dataclass(frozen=True)
class PairedCheck:
    """A candidate precision against fp32 on the same texts, flag by flag.

    Attributes:
        precision: The candidate (``"int8"``).
        texts: Texts scored by both (texts with nothing to score are left out).
        flags: (text, label, tier) decisions compared.
        flagged_reference / flagged_candidate: How many of them were flags (score at or above the tier).
        changed: Decisions that differ (``only_reference + only_candidate``).
        only_reference / only_candidate: Flags only fp32 / only the candidate raised.
        p_value: McNemar's exact two-sided p-value over those discordant flags (1.0 when none).
        max_diff: Largest score difference over every label of every text.
        passed: ``changed == 0``.
        candidate_sha256: sha256 of the candidate's model file (the check holds for that file only).
        cpu: :func:`cpu_kind` of the CPU that ran the check.
    """

    precision: str
    texts: int
    flags: int
    flagged_reference: int
    flagged_candidate: int
    changed: int
    only_reference: int
    only_candidate: int
    p_value: float
    max_diff: float
    passed: bool
    candidate_sha256: str = ""
    cpu: str = ""

    def merge(self, other: PairedCheck) -> PairedCheck:
        """This check and ``other`` (same precision, other texts) as one: counts added, McNemar's test redone on
        the pooled discordant flags."""
        from bot.eval.paired import _binom_two_sided

        only_ref, only_cand = self.only_reference + other.only_reference, self.only_candidate + other.only_candidate
        return PairedCheck(
            precision=self.precision, texts=self.texts + other.texts, flags=self.flags + other.flags,
            flagged_reference=self.flagged_reference + other.flagged_reference,
            flagged_candidate=self.flagged_candidate + other.flagged_candidate, changed=only_ref + only_cand,
            only_reference=only_ref, only_candidate=only_cand,
            p_value=_binom_two_sided(only_cand, only_ref + only_cand), max_diff=max(self.max_diff, other.max_diff),
            passed=only_ref + only_cand == 0, candidate_sha256=self.candidate_sha256, cpu=self.cpu)

    def summary(self) -> str:
        """One line: what changed, out of how many decisions."""
        return (f"{self.precision}: {self.changed} of {self.flags:,} verdict flags changed on {self.texts:,} texts "
                f"({self.only_reference} lost, {self.only_candidate} new; McNemar p={self.p_value:.3g}; max score "
                f"difference {self.max_diff:.3g})")


def policy_tiers(policy: Policy) -> list[tuple[str, float]]:
    """``(label, threshold)`` of every tier the policy flags at: each label's ``review`` and ``act`` in
    ``[thresholds]``, and the identity-target check's untargeted ``review`` tier on ``identity_attack``."""
    tiers: list[tuple[str, float]] = []
    for label, tier in policy.thresholds.items():
        for value in (tier.review, tier.act):
            if value is not None:
                tiers.append((label, float(value)))
    untargeted = policy.identity_target.untargeted.review
    if untargeted is not None:
        tiers.append(("identity_attack", float(untargeted)))
    return list(dict.fromkeys(tiers))


def paired_check(reference: Scorer, candidate: Scorer, texts: Sequence[str], policy: Policy, *,
                 precision: str, chunk: int = 128) -> PairedCheck:
    """Score ``texts`` with both scorers through :func:`bot.core.pieces.score_texts` (the policy's ``[scoring]``
    plan) and compare every flag of :func:`policy_tiers`.

    Raises:
        Whatever either scorer raises (``ScorerError``).
    """
    from bot.core.pieces import score_texts
    from bot.eval.paired import mcnemar

    tiers = policy_tiers(policy)
    mode, max_chars = policy.scoring.pieces, policy.scoring.max_chars
    ref_flags: list[bool] = []
    cand_flags: list[bool] = []
    scored = 0
    max_diff = 0.0
    for start in range(0, len(texts), chunk):
        part = list(texts[start : start + chunk])
        a = score_texts(reference, part, mode, max_chars)
        b = score_texts(candidate, part, mode, max_chars)
        for x, y in zip(a, b, strict=True):
            if x is None or y is None:
                continue
            scored += 1
            max_diff = max([max_diff, *(abs(x.values[k] - y.values[k]) for k in x.values if k in y.values)])
            for label, threshold in tiers:
                if label in x.values and label in y.values:
                    ref_flags.append(x.values[label] >= threshold)
                    cand_flags.append(y.values[label] >= threshold)
    test = mcnemar(ref_flags, cand_flags)
    changed = test.only_a + test.only_b
    return PairedCheck(precision=precision, texts=scored, flags=len(ref_flags), flagged_reference=sum(ref_flags),
                       flagged_candidate=sum(cand_flags), changed=changed, only_reference=test.only_a,
                       only_candidate=test.only_b, p_value=test.p_value, max_diff=max_diff, passed=changed == 0)


@dataclass(frozen=True)
class Choice:
    """The precision a process runs in, and why (printed on the service's ready line, in ``/readyz`` and
    ``/v1/model``)."""

    precision: str
    reason: str


def recorded_checks(manifest: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The paired checks recorded in an export's ``ONNX.json`` (``{"int8": {PairedCheck fields}}``)."""
    checks = manifest.get("precision_checks")
    return {k: v for k, v in checks.items() if isinstance(v, dict)} if isinstance(checks, dict) else {}


def choose(requested: str, manifest: Mapping[str, Any], flags: frozenset[str],
           candidate_sha256: Mapping[str, str | None]) -> Choice:
    """The precision to run in.

    Args:
        requested: ``"auto"``, ``"fp32"`` or ``"int8"`` (``MODBOT_PRECISION`` / ``--precision``).
        manifest: The export's ``ONNX.json``, with the checks :func:`record` wrote.
        flags: :func:`cpu_flags`.
        candidate_sha256: sha256 of each candidate's model file as it is on disk now (``None``: not built).

    ``auto`` takes the first of :data:`PRECISIONS` that this CPU runs fast (:func:`not_offered`) and whose
    recorded check passed for that very file on this CPU kind, else ``fp32``; the reason names what ruled each
    faster precision out. An explicit ``int8`` is honoured (the reason says whether a check passed).

    Raises:
        ValueError: ``requested`` is not one of ``auto``, ``fp32``, ``int8``.
    """
    if requested not in ("auto", *PRECISIONS):
        raise ValueError(f"precision {requested!r}: expected auto, {', '.join(PRECISIONS)}")
    checks = recorded_checks(manifest)
    kind = cpu_kind(flags)

    def verdict(precision: str) -> str | None:
        """``None`` when ``precision`` may be chosen automatically, else why not."""
        why = not_offered(precision, flags)
        if why is not None:
            return why
        rec = checks.get(precision)
        if rec is None or rec.get("candidate_sha256") != candidate_sha256.get(precision):
            return "no paired check recorded for this model file (python -m bot bench precision)"
        if rec.get("cpu") != kind:
            return f"its paired check ran on another CPU kind ({rec.get('cpu') or 'unknown'})"
        if not rec.get("passed"):
            return (f"its paired check changed {rec.get('changed')} of {rec.get('flags')} verdict flags "
                    f"(McNemar p={float(rec.get('p_value', 1.0)):.3g})")
        return None

    if requested != "auto":
        if requested == "fp32":
            return Choice("fp32", "asked (MODBOT_PRECISION / --precision)")
        why = verdict(requested)
        return Choice(requested, "asked" + ("" if why is None else f"; not chosen automatically: {why}"))
    refused: list[str] = []
    for precision in PRECISIONS:
        if precision == "fp32":
            break
        why = verdict(precision)
        if why is None:
            rec = checks[precision]
            return Choice(precision, f"auto: paired check passed ({rec.get('flags')} verdict flags on "
                                     f"{rec.get('texts')} texts unchanged)")
        refused.append(f"{precision} not used: {why}")
    return Choice("fp32", "auto" + ("; " + "; ".join(refused) if refused else ""))


def record(manifest_file: Path, check: PairedCheck, **extra: Any) -> None:
    """Write ``check`` (and ``extra`` fields, e.g. ``candidate_identity``) into the export's ``ONNX.json`` under
    ``precision_checks`` (atomically)."""
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    checks = recorded_checks(manifest)
    checks[check.precision] = {**asdict(check), **extra}
    manifest["precision_checks"] = checks
    tmp = manifest_file.with_name(manifest_file.name + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, manifest_file)


def int8_nodes(model: Path, recipe: str = INT8_RECIPE) -> list[str]:
    """Names of the MatMul nodes of ``model`` (an ONNX file) that ``recipe`` quantises: those with a weight (an
    initializer input) whose name matches :data:`INT8_RECIPES` ``[recipe]``, in graph order.

    Raises:
        bot.scoring.ScorerLoadError: ``onnx`` is missing, the file cannot be read, ``recipe`` is unknown, or no
            node matches (the export's node names are not the ones the recipe expects).
    """
    import re

    from bot.scoring import ScorerLoadError

    if recipe not in INT8_RECIPES:
        raise ScorerLoadError(f"unknown int8 recipe {recipe!r}: expected one of {', '.join(INT8_RECIPES)}")
    try:
        import onnx

        graph = onnx.load(str(model), load_external_data=False).graph
    except ImportError as exc:
        raise ScorerLoadError(f"int8 needs the onnx package: {exc}") from exc
    except Exception as exc:  # onnx raises DecodeError, OSError, ...
        raise ScorerLoadError(f"cannot read {model}: {type(exc).__name__}: {exc}") from exc
    weights = {i.name for i in graph.initializer}
    pattern = re.compile(INT8_RECIPES[recipe])
    names = [n.name for n in graph.node if n.op_type == "MatMul" and any(i in weights for i in n.input)
             and pattern.search(n.name)]
    if not names:
        raise ScorerLoadError(f"int8 recipe {recipe!r} matches no MatMul with a weight in {model}")
    return names


def int8_file(model: Path, recipe: str = INT8_RECIPE) -> Path:
    """Where :func:`quantize_int8` builds ``recipe``'s int8 model beside ``model``."""
    return model.with_name(INT8_FILE if recipe == INT8_RECIPE else f"model.int8-{recipe}.onnx")


def quantize_int8(model: Path, recipe: str = INT8_RECIPE) -> Path:
    """The int8 dynamic quantisation (per output channel) of ``model``'s (``model.onnx``) MatMuls that ``recipe``
    names (:func:`int8_nodes`), built once into :func:`int8_file` beside it (written to a temporary file and
    renamed, so a crash never leaves half a model).

    Raises:
        bot.scoring.ScorerLoadError: the quantisation tools (``onnxruntime.quantization``, ``onnx``) are missing
            or failed, or ``recipe`` selects nothing (:func:`int8_nodes`).
    """
    from bot.scoring import ScorerLoadError

    out = int8_file(model, recipe)
    if out.is_file():
        return out
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise ScorerLoadError(f"int8 needs onnxruntime's quantization tools and onnx: {exc}") from exc
    nodes = int8_nodes(model, recipe)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        quantize_dynamic(str(model), str(tmp), weight_type=QuantType.QInt8, per_channel=True,
                         nodes_to_quantize=nodes)
        os.replace(tmp, out)
    except Exception as exc:  # onnx / onnxruntime raise many types
        raise ScorerLoadError(f"int8 quantisation of {model} failed: {type(exc).__name__}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return out

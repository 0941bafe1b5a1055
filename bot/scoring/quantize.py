"""Optional int8 dynamic quantisation of a loaded detoxify model (``MODBOT_INT8=1`` / ``--int8``).

Linear layers' weights are stored as int8 and activations quantised on the fly (``torch.ao.quantization.
quantize_dynamic``, fbgemm on x86). detoxify still runs the model: only the module inside ``Detoxify.model`` is
swapped. Whether it is kept as a default is decided by measurement: docs/performance.md.
"""

from __future__ import annotations

import logging
import warnings

from bot.scoring import ScorerLoadError

log = logging.getLogger(__name__)


def quantize_int8(scorer):
    """Quantise the Linear layers of ``scorer``'s detoxify model to int8 in place; returns the scorer.

    The scorer's ``version`` gets a ``+int8`` suffix so verdicts record which variant judged them.

    Raises:
        ScorerLoadError: this torch build has no dynamic quantisation engine.
    """
    import torch

    try:
        from torch.ao.quantization import quantize_dynamic
    except ImportError as exc:  # pragma: no cover - depends on the torch build
        raise ScorerLoadError(f"int8 quantisation is not available in this torch build: {exc}") from exc
    det = scorer._model  # noqa: SLF001 - the detoxify instance the scorer wraps
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        det.model = quantize_dynamic(det.model, {torch.nn.Linear}, dtype=torch.qint8)
    scorer.version = f"{scorer.version}+int8"
    log.info("scorer %s quantised to int8", scorer.name)
    return scorer

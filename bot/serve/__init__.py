"""Scoring as a service: ``python -m bot serve``, an HTTP service that scores with the bots' own scoring path.

Layer: composition root (it may import ``bot.core``, ``bot.scoring`` and ``bot.runtime``; nothing in ``bot.core``
imports it). Parts:

- :mod:`bot.serve.perspective`: Perspective API (``POST /v1alpha1/comments:analyze``) request parsing, response and
  error shapes, and the attribute <-> label mapping.
- :mod:`bot.serve.reading`: how one raw text is read (the same :func:`bot.core.pieces.scoring_pieces` plan, long-text
  chunks and language check as the moderation service), plus sentence spans with offsets in the original text.
- :mod:`bot.serve.batcher`: micro-batching: plans of concurrent requests scored in one ``score_plans`` call.
- :mod:`bot.serve.keys`: API keys (file or environment, constant-time comparison) and per-key rate limits.
- :mod:`bot.serve.app`: the aiohttp application (routes, limits, metrics, drain on SIGTERM) and its ``main``.

The service stores nothing: no text is written to disk or logs (``doNotStore`` is accepted and always honoured).
"""

"""The composition root: builds the store, the scorer, the policy registry and the moderation service from
:class:`bot.settings.Settings`, for every entry point (``scan``, ``score``, ``eval``, ``bench``, the Discord bot).

Layer: composition root (may import every layer; nothing in ``bot.core`` imports it). Typical use::

    async with open_runtime(settings, enforce=False) as rt:
        rt.service.submit(message)

or, where the lifetime is not one block (the Discord bot's ``setup_hook`` / ``close``)::

    rt = await Runtime.open(settings)
    ...
    await rt.close()

Build order: policies first (a bad policy file fails before anything is opened or loaded), then the store, then
the scorer (the slow part: seconds to load the model), then the service. Close order is the reverse: the service
(drains what was submitted) before the store. A part that failed to build closes what was built before it.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.core.policy_registry import PolicyRegistry
from bot.core.ports import Scorer
from bot.core.service import ModerationService
from bot.core.store_port import ModStore, PolicyStore
from bot.settings import Settings, database

log = logging.getLogger(__name__)


def _int8(settings: Settings, scorer: Scorer) -> None:
    """Quantise ``scorer``'s Linear layers to int8 in place when ``settings.int8`` (``MODBOT_INT8=1``)."""
    if settings.int8:
        from bot.scoring.quantize import quantize_int8

        quantize_int8(scorer)


def _announce_first_assembly(settings: Settings) -> None:
    """One stderr line before a first run assembles the embedded model into its cache (tens of seconds with no
    other output otherwise); nothing when the cache is warm, a remote scorer or another model is used."""
    if settings.scorer_url or settings.model != "embedded" or settings.checkpoint:
        return
    from bot.model.artifact import default_cache_dir, is_assembled

    if not is_assembled():
        print(f"preparing the embedded model in {default_cache_dir()} (first run only, about 15-30 s)",  # noqa: T201
              file=sys.stderr)


def load_scorer(settings: Settings) -> Scorer:
    """Load the scorer ``settings`` names (``model``, ``checkpoint``, ``config_dir``, ``bf16``, ``int8``), once;
    with ``route_model``, wrapped with that second model in a :class:`bot.scoring.routing.LanguageRoutedScorer`.

    Blocking (seconds: assembles and loads the model); call it off the event loop in an async program.

    Raises:
        bot.scoring.ScorerLoadError: a model cannot be loaded, or the routing settings are unusable (the message
            says why).
    """
    from bot.scoring import ScorerLoadError
    from bot.scoring.detoxify_scorer import DetoxifyScorer

    check_model(settings)  # before any model loads: a typo costs no download and no minutes
    if settings.scorer_url:  # a running ``python -m bot serve`` scores for this process: no model is loaded here
        return _remote_scorer(settings)
    scorer = _onnx_scorer(settings)
    if scorer is None:
        scorer = DetoxifyScorer.load(
            settings.model, checkpoint=settings.checkpoint, config_dir=settings.config_dir, bf16=settings.bf16
        )
        scorer.runtime = "torch"  # type: ignore[attr-defined]
    _int8(settings, scorer)
    if not settings.route_model:
        return scorer
    from bot.scoring.routing import LanguageRoutedScorer

    local = settings.route_model == "local"
    try:
        second = DetoxifyScorer.load(settings.route_model, checkpoint=settings.route_checkpoint if local else None,
                                     config_dir=settings.route_config_dir if local else None, bf16=settings.bf16)
    except ScorerLoadError as exc:
        raise ScorerLoadError(f"MODBOT_ROUTE_MODEL={settings.route_model}: {exc}") from exc
    if local:
        second.languages = settings.route_languages
    _int8(settings, second)
    try:
        return LanguageRoutedScorer(scorer, second)
    except ValueError as exc:
        raise ScorerLoadError(f"MODBOT_ROUTE_MODEL: {exc}") from exc


def onnx_applies(settings: Settings) -> str | None:
    """Why ONNX Runtime cannot serve ``settings``' model (``None`` when it can): only the embedded model has a
    checked export, and bf16 autocast / torch int8 are torch features."""
    if settings.checkpoint is not None or settings.model != "embedded":
        return f"MODBOT_MODEL={settings.model}" + (" with a checkpoint" if settings.checkpoint else "")
    if settings.bf16 or settings.int8:
        return "MODBOT_BF16" if settings.bf16 else "MODBOT_INT8"
    return None


def onnx_model(settings: Settings) -> bool:
    """Whether :func:`load_scorer` loads ``settings``' model on ONNX Runtime, in the precision
    ``settings.precision`` picks (``MODBOT_RUNTIME`` not ``torch``, and :func:`onnx_applies`); with ``auto``, unless
    the export or its check fails at load, which falls back to torch with a warning."""
    return settings.runtime != "torch" and onnx_applies(settings) is None


def _onnx_scorer(settings: Settings) -> Scorer | None:
    """The embedded model on ONNX Runtime (:mod:`bot.scoring.onnx_scorer`) when ``settings.runtime`` asks for it:
    ``onnx`` always, ``auto`` when :func:`onnx_applies` (exported and checked against detoxify once, on first use;
    a failed export or check falls back to torch with a warning); ``torch``: ``None``.

    Raises:
        bot.scoring.ScorerLoadError: ``MODBOT_RUNTIME=onnx`` for a model or setting ONNX cannot serve, or the
            export / its check failed.
    """
    from bot.scoring import ScorerLoadError

    if settings.runtime == "torch":
        return None
    why_not = onnx_applies(settings)
    if why_not is not None:
        if settings.runtime == "onnx":
            raise ScorerLoadError(f"MODBOT_RUNTIME=onnx serves the embedded model only, not {why_not}; "
                                  "use MODBOT_RUNTIME=torch")
        return None
    from bot.scoring.onnx_scorer import load_embedded

    try:
        return load_embedded(precision=settings.precision)
    except ScorerLoadError as exc:
        if settings.runtime == "onnx":
            raise
        log.warning("ONNX Runtime not used (%s); scoring with torch", exc)
        return None


def _remote_scorer(settings: Settings) -> Scorer:
    """The :class:`bot.scoring.remote.RemoteScorer` of ``MODBOT_SCORER_URL`` (``scorer_key``, ``scorer_timeout_s``).

    Raises:
        bot.scoring.ScorerLoadError: the URL is malformed, the service refused the key, or model settings that
            only an in-process model can honour are set too (routing, int8, bf16).
    """
    from bot.scoring.remote import RemoteScorer

    check_model(settings)  # routing, int8 or bf16 set too
    return RemoteScorer.connect(settings.scorer_url or "", key=settings.scorer_key,
                                timeout_s=settings.scorer_timeout_s)


def check_model(settings: Settings) -> None:
    """Check the model settings without loading, downloading or creating anything, so a command that would create
    the mod log or bind a port refuses a typo first: the model is ``embedded`` or a detoxify name
    (:data:`bot.scoring.detoxify_scorer.NAMED_MODELS`), or a ``checkpoint`` that is a file (with a ``config_dir``
    that is a folder, if given), after the routing settings (:func:`_check_route`). With ``scorer_url`` only
    the settings an in-process model alone can honour are checked (the service chooses its model).

    Raises:
        bot.scoring.ScorerLoadError: naming the setting and the reason (the same sentence loading would give).
    """
    from bot.scoring import ScorerLoadError
    from bot.scoring.detoxify_scorer import EMBEDDED, NAMED_MODELS

    if settings.scorer_url:
        local = [var for var, on in (("MODBOT_ROUTE_MODEL", settings.route_model), ("MODBOT_INT8", settings.int8),
                                     ("MODBOT_BF16", settings.bf16)) if on]
        if local:
            raise ScorerLoadError(f"MODBOT_SCORER_URL is set together with {', '.join(local)}: the scoring service "
                                  "chooses its model; set them on the service, or unset MODBOT_SCORER_URL")
        return
    _check_route(settings)
    if settings.checkpoint is not None:
        if not Path(settings.checkpoint).is_file():
            raise ScorerLoadError(f"checkpoint {settings.checkpoint} does not exist")
        if settings.config_dir is not None and not Path(settings.config_dir).is_dir():
            raise ScorerLoadError(f"config dir {settings.config_dir} is not a folder")
    elif settings.model != EMBEDDED and settings.model not in NAMED_MODELS:
        raise ScorerLoadError(f"unknown model {settings.model!r}: use 'embedded', one of {', '.join(NAMED_MODELS)}, "
                              "or a checkpoint")


def _check_route(settings: Settings) -> None:
    """Check the routing settings without loading anything: ``route_model`` is ``local`` (with an existing
    ``route_checkpoint`` and ``route_languages`` the detector names: :data:`bot.core.language.CANDIDATES`) or a
    detoxify model name, and the second model reads a language
    the main model does not (a named model's languages: :data:`bot.scoring.detoxify_scorer.MODEL_LANGUAGES`).

    Raises:
        bot.scoring.ScorerLoadError: naming the ``MODBOT_ROUTE_*`` variable and the reason.
    """
    from bot.scoring import ScorerLoadError
    from bot.scoring.detoxify_scorer import ENGLISH, MODEL_LANGUAGES, NAMED_MODELS

    name = settings.route_model
    if not name:
        stray = [var for var, value in (("MODBOT_ROUTE_CHECKPOINT", settings.route_checkpoint),
                                        ("MODBOT_ROUTE_CONFIG_DIR", settings.route_config_dir),
                                        ("MODBOT_ROUTE_LANGUAGES", settings.route_languages)) if value]
        if stray:
            raise ScorerLoadError(f"{', '.join(stray)} set without MODBOT_ROUTE_MODEL: set MODBOT_ROUTE_MODEL=local "
                                  "(or a detoxify model name) to route, or unset them")
        return
    if name == "local":
        if settings.route_checkpoint is None or not settings.route_languages:
            raise ScorerLoadError("MODBOT_ROUTE_MODEL=local needs MODBOT_ROUTE_CHECKPOINT and MODBOT_ROUTE_LANGUAGES "
                                  "(the ISO 639-1 codes the model reads, e.g. fr,es,it)")
        if not Path(settings.route_checkpoint).is_file():
            raise ScorerLoadError(f"MODBOT_ROUTE_CHECKPOINT={settings.route_checkpoint}: not a file")
        if settings.route_config_dir is not None and not Path(settings.route_config_dir).is_dir():
            raise ScorerLoadError(f"MODBOT_ROUTE_CONFIG_DIR={settings.route_config_dir}: not a folder")
        from bot.core.language import CANDIDATES

        unknown = [code for code in settings.route_languages if code not in CANDIDATES]
        if unknown:  # the detector never names them, so nothing would ever be routed
            raise ScorerLoadError(f"MODBOT_ROUTE_LANGUAGES: {', '.join(unknown)} is not a language code the "
                                  "language detector names (ISO 639-1, e.g. fr,es,it)")
        second_langs: tuple[str, ...] = settings.route_languages
    elif name in NAMED_MODELS:
        second_langs = MODEL_LANGUAGES.get(name, ENGLISH)
    else:
        raise ScorerLoadError(f"MODBOT_ROUTE_MODEL={name!r} is not a model to route to: use one of "
                              f"{', '.join(n for n in NAMED_MODELS if n in MODEL_LANGUAGES)} (detoxify names) or "
                              "'local' (with MODBOT_ROUTE_CHECKPOINT and MODBOT_ROUTE_LANGUAGES)")
    main_langs = ENGLISH if settings.checkpoint is not None else MODEL_LANGUAGES.get(settings.model, ENGLISH)
    if not set(second_langs) - set(main_langs):
        raise ScorerLoadError(f"MODBOT_ROUTE_MODEL={name}: it reads no language the main model "
                              f"({settings.model}: {', '.join(main_langs)}) does not ({', '.join(second_langs)})")


def load_artifact_scorer(artifact_dir: Path, settings: Settings) -> Scorer:
    """Load the model of another artifact directory (``python -m bot.training --out DIR``), with ``settings``'
    ``bf16``/``int8`` choices: how ``eval --model`` / ``--baseline`` compare candidates with the shipped model.

    Raises:
        bot.scoring.ScorerLoadError: the artifact is missing, corrupted or built on other base weights.
    """
    from bot.scoring.detoxify_scorer import EMBEDDED, DetoxifyScorer

    scorer = DetoxifyScorer.load(EMBEDDED, artifact_dir=artifact_dir, bf16=settings.bf16)
    _int8(settings, scorer)
    return scorer


class OverrideBridge:
    """Adapts the store port's override API to the ``OverrideStore`` port :class:`PolicyRegistry` expects.

    The store returns ``list[PolicyOverride]`` and accepts scopes ``server``/``channel:<id>``...; the registry
    wants ``{dotted key: value}`` and removes with ``value=None``. Overrides are kept under scope ``"server"``
    (the dotted key itself names channels: ``channels.<id>.thresholds...``). Platform-neutral: every bot uses it.
    """

    SCOPE = "server"

    def __init__(self, store: PolicyStore) -> None:
        self.store = store

    async def list_policy_overrides(self, platform: str, server_id: str) -> dict[str, Any]:
        """``{dotted key: value}`` of a server's overrides."""
        rows = await self.store.list_policy_overrides(platform, server_id, self.SCOPE)
        return {r.key: r.value for r in rows}

    async def set_policy_override(self, platform: str, server_id: str, scope: str, key: str, value: Any,
                                  moderator_id: str | None) -> None:
        """Store (or, for ``None``, remove) an override; the store audits both."""
        if value is None:
            await self.store.reset_policy_override(platform, server_id, self.SCOPE, key, moderator_id)
        else:
            await self.store.set_policy_override(platform, server_id, self.SCOPE, key, value, moderator_id)


class OverrideSnapshot:
    """The runtime overrides (``/policy set``) of some servers, read once from the mod log: what a scan judges
    with (those in force when it started; a scan's replay judges in a scratch mod log, which holds none).
    Read-only; the ``OverrideStore`` port :class:`PolicyRegistry` expects.

    Args:
        overrides: ``(platform, server id)`` -> ``{dotted key: value}``.
    """

    def __init__(self, overrides: dict[tuple[str, str], dict[str, Any]]) -> None:
        self.overrides = overrides

    @classmethod
    async def read(cls, store: PolicyStore, servers: Iterable[tuple[str, str]]) -> OverrideSnapshot:
        """The overrides that apply to ``servers`` (:meth:`PolicyRegistry.override_keys`: an export's guild's or
        workspace's too), read from ``store``."""
        bridge = OverrideBridge(store)
        keys = {key for server in servers for key in PolicyRegistry.override_keys(*server)}
        return cls({key: await bridge.list_policy_overrides(*key) for key in sorted(keys)})

    async def list_policy_overrides(self, platform: str, server_id: str) -> dict[str, Any]:
        """``{dotted key: value}`` of a server's overrides as read (``{}``: none, or not read)."""
        return dict(self.overrides.get((platform, server_id), {}))

    async def set_policy_override(self, platform: str, server_id: str, scope: str, key: str, value: Any,
                                  moderator_id: str | None) -> None:
        """Never: a snapshot is read-only.

        Raises:
            RuntimeError: always.
        """
        raise RuntimeError("the overrides a scan read from the mod log cannot be changed")


def build_policies(settings: Settings, *, extra_policy_files: tuple[Path, ...] = (), server_files: bool = True,
                   store: PolicyStore | None = None) -> PolicyRegistry:
    """The policy registry of ``settings``: ``default_policy`` < ``extra_policy_files`` < the server's file in
    ``servers_dir`` (when ``server_files``) < runtime overrides in ``store`` (when given, via
    :class:`OverrideBridge`).

    Raises:
        bot.core.policy.PolicyError: the default policy or an extra file is missing or invalid.
    """
    return PolicyRegistry(
        settings.default_policy,
        servers_dir=settings.servers_dir if server_files else None,
        store=OverrideBridge(store) if store is not None else None,
        extra_files=tuple(extra_policy_files),
    )


@dataclass
class Runtime:
    """Everything one process needs to moderate: built by :meth:`open`, closed by :meth:`close`.

    Attributes:
        settings: The settings it was built from.
        policies: Per-server effective policies.
        store: The mod log (the core's store port; SQLite or PostgreSQL by ``settings.db_path``).
        scorer: The loaded :class:`bot.core.ports.Scorer`.
        service: The started :class:`ModerationService`.
    """

    settings: Settings
    policies: PolicyRegistry
    store: ModStore
    scorer: Scorer
    service: ModerationService
    _closers: list[Callable[[], Any]] = field(default_factory=list, repr=False)

    @classmethod
    async def open(
        cls,
        settings: Settings,
        *,
        enforce: bool = True,
        stateful_rules: bool = True,
        extra_policy_files: tuple[Path, ...] | list[Path] = (),
        server_files: bool = True,
        overrides: bool = True,
        scorer: Scorer | None = None,
        scorer_factory: Callable[[], Scorer] | None = None,
        db_path: Path | str | None = None,
        batch_size: int = 128,
        validate_platform: str | None = None,
        policies: PolicyRegistry | None = None,
    ) -> Runtime:
        """Build and start everything.

        Args:
            settings: Process settings (policy files, database, model).
            enforce: Carry out actions (the bots) or record them as shadow verdicts (``scan``, ``score``).
            stateful_rules: Spam, raid and escalation windows across messages (off for ``score``: each line alone).
            extra_policy_files: ``--policy`` files layered on the default for every server.
            server_files: Apply ``settings.servers_dir/<platform>-<server id>.toml``.
            overrides: Apply runtime overrides stored in the mod log (``/policy set``).
            scorer: An already loaded scorer (tests, ``bench``); else ``scorer_factory`` is called.
            scorer_factory: Zero-argument loader, called once off the event loop; default
                ``load_scorer(settings)``.
            db_path: The mod log (a SQLite file path or a ``postgresql://`` URL); default ``settings.db_path``.
            batch_size: Texts per model batch in the service.
            validate_platform: Check every server file of this platform (``discord``, ``slack``) at startup, so a
                bad file stops a bot before it connects instead of failing on the first message.
            policies: The policy registry to judge with, built by the caller (a scan's, with the overrides it
                read from the mod log: :class:`OverrideSnapshot`); ``extra_policy_files``, ``server_files`` and
                ``overrides`` are then not used.

        Raises:
            bot.core.policy.PolicyError: a policy file is invalid (before the store opens or the model loads).
            bot.core.errors.StoreRefused: the database cannot be used (before the model loads).
            bot.core.errors.StoreBusy: the database is locked past the busy timeout while migrating.
            bot.scoring.ScorerLoadError: the model cannot be loaded (the store is closed again).
        """
        from bot.store import open_store

        given = policies is not None
        if policies is None:
            policies = build_policies(settings, extra_policy_files=tuple(extra_policy_files),
                                      server_files=server_files)
        if validate_platform is not None:
            policies.validate_servers(validate_platform)
        store = await open_store(database(db_path) if db_path is not None else settings.db_path)
        if settings.announce_store and db_path is None:
            print(f"mod log: {store.location}", file=sys.stderr)  # noqa: T201 - one line at start, never a password
        try:
            if overrides and not given:
                policies.store = OverrideBridge(store)
            if scorer is None:
                factory = scorer_factory or (lambda: load_scorer(settings))
                if settings.announce_store and scorer_factory is None:
                    _announce_first_assembly(settings)
                scorer = await asyncio.to_thread(factory)
            service = ModerationService(scorer=scorer, store=store, policies=policies, enforce=enforce,
                                        batch_size=batch_size, stateful_rules=stateful_rules,
                                        max_pending=settings.queue_max)
            await service.start()
        except BaseException:
            await store.close()
            raise
        return cls(settings=settings, policies=policies, store=store, scorer=scorer, service=service,
                   _closers=[service.close, store.close])

    async def close(self) -> None:
        """Drain and stop the service, then close the store. Idempotent."""
        while self._closers:
            await self._closers.pop(0)()


@asynccontextmanager
async def open_runtime(settings: Settings, **kwargs: Any) -> AsyncIterator[Runtime]:
    """``async with open_runtime(settings, ...) as rt``: :meth:`Runtime.open` with the same keyword arguments,
    :meth:`Runtime.close` on exit (also on error)."""
    rt = await Runtime.open(settings, **kwargs)
    try:
        yield rt
    finally:
        await rt.close()

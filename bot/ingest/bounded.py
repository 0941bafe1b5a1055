"""Bounded, streamed reads of export files: every decompression through a size-capped stream, text decoded in
chunks, lines and JSON array items read one at a time (issue 25 item 9).

Nothing here holds a whole file: a plain file is read in :data:`CHUNK` pieces; a ``.gz`` file or a zip member is
inflated through :class:`CappedStream`, which counts the bytes it hands out and raises :class:`TooLarge` past an
absolute bound or past :data:`MAX_RATIO` times the compressed size (after :data:`RATIO_FLOOR`), so a bomb costs at
most one chunk of memory before it is refused, with the file named.
"""

from __future__ import annotations

import codecs
import gzip
import io
import json
import logging
import re
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, cast

from bot.ingest.common import TOO_DEEP, skip_json_value
from bot.ingest.encoding import DecodedBytes, input_encoding

log = logging.getLogger(__name__)

#: Bytes read (or inflated) per step.
CHUNK = 1 << 20
#: Largest inflated/compressed ratio of a ``.gz`` file or zip member; chat JSON compresses about 5-15x, so 100x
#: leaves room while a bomb (1 MiB -> 1 GiB is 1,000x) is stopped after :data:`RATIO_FLOOR` bytes.
MAX_RATIO = 100
#: Bytes any compressed file may inflate to whatever its ratio (small, very repetitive files are normal).
RATIO_FLOOR = 8 << 20
#: Largest a single ``.gz`` file may inflate to, in bytes (8 GiB; it is streamed, so this bounds time, not memory).
MAX_INFLATED_BYTES = 8 << 30
#: Longest JSON line or CSV physical line, in bytes (a chat message with its metadata is a few KiB).
MAX_LINE_BYTES = 16 << 20
#: Largest single JSON array item (one message), in characters.
MAX_ITEM_CHARS = 64 << 20
#: How far into a DiscordChatExporter JSON file its ``"messages": [`` must start, in characters.
MAX_HEADER_CHARS = 16 << 20


class TooLarge(ValueError):
    """A file (or zip member) is past a size bound: its message says which bound and how far it got. Raised while
    reading (declared sizes are not trusted); readers report it as an :class:`bot.ingest.IngestError` for the file
    and keep what came before."""


class Damaged(OSError):
    """A compressed file is damaged (cut before its end, a bad CRC, corrupt deflate data): raised once everything
    inflated before the damage has been read; the message says what and after how many inflated bytes. An
    :class:`OSError`, so readers report it as an unreadable file after keeping what came before."""


class CappedStream(io.RawIOBase):
    """A read-only binary stream over ``raw`` (an inflating stream) that raises :class:`TooLarge` once more than
    ``limit`` bytes, or more than ``max_ratio * compressed`` bytes past ``floor``, have come out of it.

    Damage (gzip's ``EOFError`` for a cut file, ``BadGzipFile`` for a bad CRC or header, ``zlib.error`` for corrupt
    data) is held back as :class:`Damaged`: the read that meets it ends the stream there (0 bytes, so a buffered
    reader above hands out everything inflated so far rather than dropping its partial buffer with the exception),
    and :meth:`raise_damage` (called by :class:`_InflatedReader` at that end) raises it.

    Args:
        raw: The inflating stream (``gzip.GzipFile``, ``zipfile.ZipExtFile``); closed with this one.
        limit: Absolute bound on inflated bytes.
        compressed: Compressed size in bytes (for the ratio).
        max_ratio: Largest inflated/compressed ratio; ``floor``: bytes allowed whatever the ratio.
        on_bytes: Called with each chunk's length (a zip's running total).
    """

    def __init__(self, raw: IO[bytes] | io.BufferedIOBase, *, limit: int, compressed: int, max_ratio: int = MAX_RATIO,
                 floor: int = RATIO_FLOOR, on_bytes: Any = None) -> None:
        super().__init__()
        self._raw = raw
        self.limit = limit
        self.compressed = compressed
        self.max_ratio = max_ratio
        self.ratio_cap = max(floor, max_ratio * max(compressed, 1))
        self.total = 0
        self._on_bytes = on_bytes
        self.damage: Damaged | None = None
        self._done = False

    def raise_damage(self) -> None:
        """Raise the :class:`Damaged` met by a read, if any (once)."""
        if self.damage is not None:
            exc, self.damage = self.damage, None
            self._done = True
            raise exc

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self.damage is not None or self._done:
            return 0
        read1 = getattr(self._raw, "read1", None)  # one step of inflation: what came out before damage is kept
        try:
            data = read1(min(len(b), CHUNK)) if read1 is not None else self._raw.read(min(len(b), CHUNK))
        except (EOFError, OSError, zlib.error) as exc:
            what = "ends before its end-of-stream marker (cut short?)" if isinstance(exc, EOFError) else (
                f"damaged compressed data ({exc})")
            self.damage = Damaged(f"{what}, after {self.total:,} inflated bytes; read up to there")
            return 0
        n = len(data)
        self.total += n
        if self.total > self.limit:
            raise TooLarge(f"inflates past the {self.limit:,}-byte bound; skipped the rest")
        if self.total > self.ratio_cap:
            raise TooLarge(f"inflates past {self.max_ratio}x its {self.compressed:,} compressed bytes (a zip bomb?); "
                           f"skipped after {self.total:,} bytes")
        if self._on_bytes is not None:
            self._on_bytes(n)
        b[:n] = data
        return n

    def close(self) -> None:
        try:
            self._raw.close()
        finally:
            super().close()


class _InflatedReader(io.BufferedReader):
    """The buffered reader over a :class:`CappedStream`: at the end of the data (an empty ``read``/``readline``)
    it raises the stream's :class:`Damaged`, if any, so a damaged file ends with its error, after its data."""

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        if not data and size != 0:
            self._check()
        return data

    def readline(self, size: int | None = -1) -> bytes:
        data = super().readline(size)
        if not data and size != 0:
            self._check()
        return data

    def _check(self) -> None:
        raw = self.raw
        if isinstance(raw, CappedStream):
            raw.raise_damage()


def inner_name(path: Path) -> Path:
    """The name a ``.gz`` file had before compression (``chat.jsonl.gz`` -> ``chat.jsonl``); other paths as is."""
    return path.with_suffix("") if path.suffix.lower() == ".gz" else path


@contextmanager
def open_binary(path: Path, data: bytes | None = None) -> Iterator[IO[bytes]]:
    """Open an export file for streamed reading: ``data`` if given, a ``.gz`` file through a
    :class:`CappedStream` (bounded by :data:`MAX_INFLATED_BYTES` and :data:`MAX_RATIO`), else the file itself.
    Reading may raise :class:`TooLarge` (a ``.gz`` bomb) or :class:`Damaged` (a damaged one, once everything
    inflated before the damage has been read)."""
    if data is not None:
        yield io.BytesIO(data)
        return
    if path.suffix.lower() == ".gz":
        raw = CappedStream(gzip.open(path, "rb"), limit=MAX_INFLATED_BYTES, compressed=path.stat().st_size)
        with _InflatedReader(raw, CHUNK) as fh:
            yield fh
        return
    with path.open("rb") as fh:
        yield fh


def read_head(path: Path, n: int = 4096) -> bytes:
    """The first ``n`` bytes of a file (inflated for ``.gz``), or ``b""`` when it cannot be read."""
    try:
        with open_binary(path) as fh:
            return fh.read(n)
    except (OSError, EOFError, TooLarge):
        return b""


def damage_of(path: Path, n: int = 4096) -> Damaged | None:
    """The :class:`Damaged` error met inflating the first ``n`` bytes of a ``.gz`` file (``None``: not a ``.gz``,
    or its start inflates): says why a damaged file's format could not be detected."""
    if path.suffix.lower() != ".gz":
        return None
    try:
        with open_binary(path) as fh:
            fh.read(n)
            fh.read(n)  # at the end of what inflates, the damage is raised
    except Damaged as exc:
        return exc
    except (OSError, TooLarge):
        return None
    return None


def iter_lines(fh: IO[bytes], where: str, max_bytes: int = MAX_LINE_BYTES) -> Iterator[str | None]:
    """Yield the stream's lines decoded, line endings kept; a line longer than ``max_bytes`` (in UTF-8) is read
    past in chunks and yielded as ``None``.

    The text is UTF-8 (a leading BOM dropped, bad bytes -> U+FFFD with a warning), or UTF-16 / UTF-32 in either byte
    order behind that encoding's byte order mark (:func:`bot.ingest.encoding.input_encoding`, as ``score`` reads
    its input; Windows PowerShell 5.1's ``>`` writes UTF-16LE), where a lone surrogate becomes U+FFFD.

    Raises:
        Damaged: a damaged compressed stream, after the lines before the damage (also in UTF-16 / UTF-32).
        bot.ingest.encoding.StrayBytes: UTF-16 / UTF-32 text that ends with bytes that are not a whole code unit, after every line
            (the last one without them).
    """
    codec, _mark, _errors = input_encoding(_peek(fh, 4))
    if codec == "utf-8":
        yield from _utf8_lines(fh, where, max_bytes)
        return
    raw = _Reencoded(fh)
    with io.BufferedReader(raw, CHUNK) as utf8:
        yield from _utf8_lines(utf8, where, max_bytes)
    if raw.damage is not None:
        raise raw.damage
    if raw.decoded.stray is not None:
        raise raw.decoded.stray


def _peek(fh: IO[bytes], n: int) -> bytes:
    """Up to the first ``n`` bytes of ``fh`` (at its start), left unread: peeked (a buffered reader) or read and
    sought back (a seekable stream)."""
    peek = getattr(fh, "peek", None)
    if peek is not None:
        return cast(bytes, peek(n))[:n]
    pos = fh.tell()
    head = fh.read(n)
    fh.seek(pos)
    return head


class _Reencoded(io.RawIOBase):
    """A read-only binary stream of the UTF-8 bytes of ``fh``'s text (:class:`bot.ingest.encoding.DecodedBytes`:
    UTF-16 / UTF-32 behind its byte order mark), for the UTF-8 line reader. A :class:`Damaged` met reading ``fh``
    ends the stream there and is kept in :attr:`damage` (the lines before it are read first)."""

    def __init__(self, fh: IO[bytes]) -> None:
        super().__init__()
        self._fh = fh
        self.decoded = DecodedBytes(self._read, chunk=CHUNK)
        self._pieces = iter(self.decoded)
        self._held = b""
        self.damage: Damaged | None = None

    def _read(self, n: int) -> bytes:
        if self.damage is not None:
            return b""
        try:
            return self._fh.read(n)
        except Damaged as exc:
            self.damage = exc
            return b""

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._held:
            piece = next(self._pieces, None)
            if piece is None:
                return 0
            self._held = piece.encode("utf-8", "replace")
        n = min(len(b), len(self._held))
        b[:n] = self._held[:n]
        self._held = self._held[n:]
        return n


def _utf8_lines(fh: IO[bytes], where: str, max_bytes: int) -> Iterator[str | None]:
    """:func:`iter_lines` of a UTF-8 stream."""
    first = True
    while True:
        raw = fh.readline(max_bytes + 1)
        if not raw:
            return
        if len(raw) > max_bytes and not raw.endswith(b"\n"):
            while (rest := fh.readline(CHUNK)) and not rest.endswith(b"\n"):
                pass
            first = False
            yield None
            continue
        try:
            text = raw.decode("utf-8-sig" if first else "utf-8")
        except UnicodeDecodeError as exc:
            log.warning("%s: invalid UTF-8 at byte %d of a line, replaced", where, exc.start)
            text = raw.decode("utf-8-sig" if first else "utf-8", errors="replace")
        first = False
        yield text


class TextChunks:
    """Decoded text of a binary stream, :data:`CHUNK` bytes at a time (UTF-8, BOM dropped; invalid bytes become
    U+FFFD with one warning naming ``where``). A damaged compressed stream ends the text where the damage is, and
    :attr:`damage` holds the :class:`Damaged` error (the reader reports it once it has used the text before it:
    :class:`JsonArrayReader` reads a chunk ahead of the item it parses)."""

    def __init__(self, fh: IO[bytes], where: str) -> None:
        self._fh = fh
        self._where = where
        self._dec = codecs.getincrementaldecoder("utf-8-sig")("strict")
        self._warned = False
        self.eof = False
        self.damage: Damaged | None = None

    def read(self) -> str:
        """The next piece of text (``""`` at the end, or at the damage of a damaged compressed stream)."""
        while not self.eof:
            try:
                data = self._fh.read(CHUNK)
            except Damaged as exc:
                self.damage, data = exc, b""
            final = not data
            self.eof = final
            try:
                text = self._dec.decode(data, final)
            except UnicodeDecodeError as exc:
                pending, _flag = self._dec.getstate()
                if not self._warned:
                    log.warning("%s: invalid UTF-8 near byte %d of a chunk, replaced", self._where, exc.start)
                    self._warned = True
                self._dec = codecs.getincrementaldecoder("utf-8")("replace")
                text = self._dec.decode(pending + data, final)
            if text:
                return text
        return ""


class JsonArrayReader:
    """Reads a JSON document from a stream one top-level array item at a time, without holding the file.

    Use :meth:`find` to reach ``"key": [`` (the text before it is :attr:`prefix`), then :meth:`items`. Positions
    of errors are ``offset N (line L, column C)`` in characters of the whole text, as :func:`json.JSONDecodeError`
    would give for the whole file.
    """

    def __init__(self, chunks: TextChunks) -> None:
        self._chunks = chunks
        self.buf = ""
        self.pos = 0
        self.base = 0  # characters of the text dropped before buf
        self.lines_base = 0  # newlines in the dropped text
        self.prefix = ""
        self._decoder = json.JSONDecoder()

    def _more(self) -> bool:
        text = self._chunks.read()
        if not text:
            return False
        if self.pos > CHUNK:
            self.lines_base += self.buf.count("\n", 0, self.pos)
            self.base += self.pos
            self.buf = self.buf[self.pos:]
            self.pos = 0
        self.buf += text
        return True

    def _grow(self, want: int) -> bool:
        """Read until ``want`` characters follow the position or the text ends; True if anything was read."""
        grew = False
        while len(self.buf) - self.pos < want and self._more():
            grew = True
        return grew

    def where(self, buf_pos: int) -> str:
        """``offset N (line L, column C)`` of a position in the current buffer."""
        line_start = self.buf.rfind("\n", 0, buf_pos) + 1
        line = self.lines_base + self.buf.count("\n", 0, buf_pos) + 1
        return f"offset {self.base + buf_pos} (line {line}, column {buf_pos - line_start + 1})"

    def find(self, key: str, limit: int = MAX_HEADER_CHARS) -> bool:
        """Read until ``"key": [`` is found (True; :attr:`prefix` is the text before the key) or the text ends or
        passes ``limit`` characters without it (False; :attr:`prefix` is all that was read)."""
        pattern = re.compile(r'"' + re.escape(key) + r'"\s*:\s*\[')
        while True:
            m = pattern.search(self.buf)
            if m:
                self.prefix = self.buf[: m.start()]
                self.pos = m.end()
                return True
            if len(self.buf) > limit or not self._more():
                self.prefix = self.buf
                return False

    def rest(self, limit: int = MAX_HEADER_CHARS) -> str | None:
        """The text after the current position, if it ends within ``limit`` characters (else ``None``)."""
        while self._more():
            if len(self.buf) - self.pos > limit:
                return None
        return self.buf[self.pos:]

    def items(self) -> Iterator[tuple[int, Any]]:
        """Yield ``(index, item)`` for each item of the array whose ``[`` was just passed: an item nested too deeply
        for the parser is :data:`bot.ingest.common.TOO_DEEP`. Stops after ``]``. Raises :class:`JsonBreak` at
        damage (malformed or truncated text, or an item past :data:`MAX_ITEM_CHARS`)."""
        i = 0
        while True:
            while True:
                while self.pos < len(self.buf) and self.buf[self.pos] in " \t\r\n,":
                    self.pos += 1
                if self.pos < len(self.buf) or not self._more():
                    break
            if self.pos >= len(self.buf):
                raise JsonBreak(self.where(self.pos), "malformed or truncated JSON: the array is not closed")
            if self.buf[self.pos] == "]":
                self.pos += 1
                return
            while len(self.buf) - self.pos < CHUNK and self._more():
                pass
            want = 2 * CHUNK
            while True:
                try:
                    item, after = self._decoder.raw_decode(self.buf, self.pos)
                    break
                except json.JSONDecodeError as exc:
                    # maybe only cut by the buffer's end: read on (doubling) up to the item bound or the end
                    if self._chunks.eof and not self._grow(want):
                        raise JsonBreak(self.where(exc.pos), f"malformed or truncated JSON: {exc.msg}") from None
                    if len(self.buf) - self.pos > MAX_ITEM_CHARS:
                        raise JsonBreak(self.where(exc.pos), f"malformed JSON (or one item past "
                                        f"{MAX_ITEM_CHARS:,} characters): {exc.msg}") from None
                    self._grow(want)
                    want *= 2
                except RecursionError:
                    end = skip_json_value(self.buf, self.pos)
                    while end is None or end >= len(self.buf):
                        if len(self.buf) - self.pos > MAX_ITEM_CHARS or not self._more():
                            break
                        end = skip_json_value(self.buf, self.pos)
                    if end is None:
                        raise JsonBreak(self.where(self.pos), "malformed or truncated JSON: the text ends inside "
                                        "an item") from None
                    item, after = TOO_DEEP, end
                    break
            self.pos = after
            yield i, item
            i += 1


class JsonBreak(Exception):
    """Damage in a streamed JSON text: ``position`` (``offset N (line L, column C)``) and ``reason``."""

    def __init__(self, position: str, reason: str) -> None:
        self.position = position
        self.reason = reason
        super().__init__(f"{position}: {reason}")

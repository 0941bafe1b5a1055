"""Which encoding a binary input is written in, and its text piece by piece: shared by ``score`` (its standard
input, :func:`bot.jobs.score.input_lines`) and ``scan``'s line readers (:func:`bot.ingest.bounded.iter_lines`).

A byte order mark at the start names the encoding: UTF-32 LE/BE, UTF-8, UTF-16 LE/BE (Windows PowerShell 5.1's
``>`` writes UTF-16LE with its mark); without one the input is UTF-8. The mark is not part of the text.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterator

#: Bytes read from the input at a time by default.
CHUNK = 1 << 16

#: Byte order marks that name the input's encoding, UTF-32's before UTF-16's (UTF-32LE's starts with UTF-16LE's):
#: ``(mark, codec, errors)``. Without one the input is UTF-8.
BYTE_ORDER_MARKS = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "replace"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "replace"),
    (codecs.BOM_UTF8, "utf-8", "surrogateescape"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "replace"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "replace"),
)


def input_encoding(head: bytes) -> tuple[str, int, str]:
    """The encoding a binary input starting with ``head`` (its first 4 bytes or more) is written in.

    Returns:
        ``(codec, mark length in bytes, errors)``: by the byte order mark (:data:`BYTE_ORDER_MARKS`: UTF-32 LE/BE,
        UTF-8, UTF-16 LE/BE), else ``("utf-8", 0, "surrogateescape")``. ``errors``: UTF-8 keeps a byte that is not
        UTF-8 as U+DC80..U+DCFF for the reader to name (``score``) or replace (``scan``); in UTF-16/32 a code unit
        that is not text (a lone surrogate) becomes U+FFFD, as a lone surrogate escape in a JSON string does.
    """
    for mark, codec, errors in BYTE_ORDER_MARKS:
        if head.startswith(mark):
            return codec, len(mark), errors
    return "utf-8", 0, "surrogateescape"


#: Bytes per code unit of the codecs whose text is whole code units (UTF-8 has none: a cut character is bad bytes).
CODE_UNIT = {"utf-16-le": 2, "utf-16-be": 2, "utf-32-le": 4, "utf-32-be": 4}


class StrayBytes(ValueError):
    """A UTF-16 / UTF-32 input ends with bytes that are not a whole code unit (an odd byte after UTF-16: a file cut
    short, or joined with one in another encoding). They are not read; the text before them is.

    Attributes:
        offset: Byte offset of the first stray byte from the start of the input (0-based, the byte order mark
            counted).
        count: How many bytes are left over (1 for UTF-16; 1 to 3 for UTF-32).
        codec: The input's codec (``"utf-16-le"``, ...).
        reason: The problem in words, without the position: ``"the UTF-16LE text ends with 1 stray byte, not a
            whole 2-byte code unit (cut short?); not read"``.
    """

    def __init__(self, offset: int, count: int, codec: str) -> None:
        self.offset, self.count, self.codec = offset, count, codec
        name = codec.upper().replace("-LE", "LE").replace("-BE", "BE")
        self.reason = (f"the {name} text ends with {count} stray byte{'s' if count > 1 else ''}, not a whole "
                       f"{CODE_UNIT[codec]}-byte code unit (cut short?); not read")
        super().__init__(f"byte {offset}: {self.reason}")


class DecodedBytes:
    """The text of a binary input, a piece at a time, in the encoding :func:`input_encoding` finds (its mark
    dropped). Iterate it once.

    Args:
        read: ``read(n)`` gives up to ``n`` more bytes, ``b""`` at the end (a pipe's ``read1``: what it holds now).
        first: Bytes already read from the input's start, which come before what ``read`` gives (``b""``: the input
            was found empty; ``None``: nothing read yet).
        chunk: Bytes asked of ``read`` at a time.

    Attributes:
        codec: The codec found (``"utf-16-le"``, ...); ``None`` until iteration starts.
        stray: Once the text has been read to its end: the :class:`StrayBytes` a UTF-16 / UTF-32 input ends with
            (left out of the text, so the last line is whole), else ``None``.
    """

    def __init__(self, read: Callable[[int], bytes], *, first: bytes | None = None, chunk: int = CHUNK) -> None:
        self._read = read
        self._first = first
        self._chunk = chunk
        self.codec: str | None = None
        self.stray: StrayBytes | None = None

    def __iter__(self) -> Iterator[str]:
        data, eof = (b"", False) if self._first is None else (self._first, not self._first)
        while not eof and len(data) < 4:  # a pipe may hand over fewer bytes than a byte order mark at first
            more = self._read(self._chunk)
            data, eof = data + more, not more
        codec, skip, errors = input_encoding(data)
        self.codec = codec
        decoder = codecs.getincrementaldecoder(codec)(errors)
        total = len(data)
        data = data[skip:]
        while True:
            yield decoder.decode(data)
            if eof:
                break
            data = self._read(self._chunk)
            total += len(data)
            eof = not data
        left = (total - skip) % CODE_UNIT.get(codec, 1)
        if left:  # the decoder holds them (it decodes whole code units only): drop them, say where they were
            held, flag = decoder.getstate()
            decoder.setstate((held[:-left], flag))
            self.stray = StrayBytes(total - left, left, codec)
        yield decoder.decode(b"", final=True)

"""Which text encoding a table file is in, decided over the whole file (a stray cp1252 byte deep in a utf-8 file
cannot break parsing halfway), and the mixed utf-8/cp1252 codec for files that are mostly utf-8 with the odd
line another program appended.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

#: Files are read this many bytes at a time (and sniffed from their first block).
BLOCK_BYTES = 1 << 20
#: Mostly utf-8 with stray cp1252 bytes: an encoding registered below, so pandas and ``open`` read such files.
MIXED_ENCODING = "utf-8+cp1252"
_CP1252_FALLBACK = "dagsmith-cp1252"
_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
_ASCII = bytes(range(128))


def detect_encoding(path: Path, head: bytes) -> str:
    """A byte-order mark decides; otherwise utf-8 if it decodes the whole file, utf-8 with cp1252 for the odd line
    when the file is mostly utf-8 (rows appended by another program), else cp1252, else latin-1."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if _decodes(path, "utf-8"):
        return "utf-8"
    sequences, stray = _utf8_evidence(path)
    if sequences > stray:
        return MIXED_ENCODING
    return "cp1252" if _decodes(path, "cp1252") else "latin-1"  # latin-1 decodes any byte sequence


def _utf8_evidence(path: Path) -> tuple[int, int]:
    """How many utf-8 multi-byte characters the file holds, and how many non-ASCII bytes outside them."""
    sequences = stray = 0
    with path.open("rb") as file:
        for block in iter(lambda: file.read(BLOCK_BYTES), b""):
            found = _UTF8_SEQUENCE.findall(block)
            sequences += len(found)
            stray += len(block.translate(None, _ASCII)) - sum(map(len, found))
    return sequences, stray


def _as_cp1252(error: UnicodeError) -> tuple[str, int]:
    """Bytes that are not utf-8, read as cp1252 (as latin-1 for the five bytes cp1252 leaves undefined)."""
    stray = error.object[error.start:error.end]
    return "".join(bytes([byte]).decode("cp1252", errors="ignore") or chr(byte) for byte in stray), error.end


class _MixedDecoder(codecs.BufferedIncrementalDecoder):
    def _buffer_decode(self, data: bytes, errors: str, final: bool) -> tuple[str, int]:
        return codecs.utf_8_decode(data, _CP1252_FALLBACK, final)


def _mixed_codec(name: str) -> codecs.CodecInfo | None:
    if name != re.sub(r"\W", "_", MIXED_ENCODING):  # the name as codecs.lookup normalises it
        return None
    return codecs.CodecInfo(
        name=MIXED_ENCODING, encode=codecs.utf_8_encode, incrementalencoder=codecs.getincrementalencoder("utf-8"),
        decode=lambda data, errors="strict": codecs.utf_8_decode(data, _CP1252_FALLBACK, True),
        incrementaldecoder=_MixedDecoder,
    )


codecs.register_error(_CP1252_FALLBACK, _as_cp1252)
codecs.register(_mixed_codec)


def _decodes(path: Path, encoding: str) -> bool:
    decoder = codecs.getincrementaldecoder(encoding)()
    try:
        with path.open("rb") as file:
            for block in iter(lambda: file.read(BLOCK_BYTES), b""):
                decoder.decode(block)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True

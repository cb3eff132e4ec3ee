"""The frame format of transform outputs (xformgraph/frame in the Go tree), read without
copying: a tensor frame becomes a numpy array that is a view of the received buffer.

Layout (little-endian): "NTXF", version (1 or 2), kind (1 tensor, 2 raw), dtype (tensor) or
media hint (raw), layout, rank, reserved byte, domain length D (version 2), CRC-32 of the
payload, payload length, rank x uint64 dims, D bytes of the writer's determinism domain
(NUL-padded), then the payload. Several outputs are several frames back to back.
"""

from __future__ import annotations

import dataclasses
import struct
import zlib
from typing import List, Optional, Tuple

import numpy as np

from .errors import FrameError

MAGIC = b"NTXF"
HEADER = struct.Struct("<4sBBBBBBHIQ")  # 24 bytes
MAX_RANK = 8
MAX_DOMAIN = 1024

#: dtype codes -> (name, numpy dtype of the elements). bfloat16 has no numpy dtype: its
#: elements are returned as uint16 bit patterns (torch: ``t.view(torch.bfloat16)``). int32
#: and int64 hold token ids and attention masks (the tokenize op).
DTYPES = {1: ("uint8", np.dtype("u1")), 2: ("float16", np.dtype("<f2")), 3: ("bfloat16", np.dtype("<u2")),
          4: ("float32", np.dtype("<f4")), 5: ("int32", np.dtype("<i4")), 6: ("int64", np.dtype("<i8"))}
#: L is one token sequence [length]; NL rows of them [rows, length] (packing, one per document).
LAYOUTS = {1: "HWC", 2: "CHW", 3: "THWC", 4: "TCHW", 5: "L", 6: "NL"}
RANK_OF = {1: 3, 2: 3, 3: 4, 4: 4, 5: 1, 6: 2}
MEDIA = {0: "unknown", 1: "jpeg", 2: "png", 3: "webp", 4: "video"}


@dataclasses.dataclass
class Frame:
    """One output. For a tensor, ``array`` is a numpy view of the buffer (read-only when the
    buffer is) and ``dtype``/``layout`` name its element type and axis order; for a raw
    frame (the untransformed sample, passed through), ``data`` is a memoryview of the bytes
    and ``media`` the format hint."""

    kind: str  # "tensor" or "raw"
    domain: str  # the writer's determinism domain ("" for version 1 frames)
    array: Optional[np.ndarray] = None
    dtype: str = ""
    layout: str = ""
    data: Optional[memoryview] = None
    media: str = ""
    raw: Optional[memoryview] = None  # the whole encoded frame (header and payload)

    @property
    def payload(self) -> memoryview:
        if self.kind == "raw":
            return self.data
        return memoryview(self.array.reshape(-1).view(np.uint8))


def parse_one(buf, off: int = 0, verify: bool = True) -> Tuple[Frame, int]:
    """Parses the frame at ``off`` and returns it with the offset after it."""
    mv = memoryview(buf).cast("B") if not isinstance(buf, memoryview) or buf.format != "B" else buf
    if len(mv) - off < HEADER.size:
        raise FrameError("frame at %d: %d bytes left, header needs %d" % (off, len(mv) - off, HEADER.size))
    magic, ver, kind, dtype, layout, rank, reserved, dlen, crc, n = HEADER.unpack_from(mv, off)
    if magic != MAGIC:
        raise FrameError("frame at %d: bad magic %r" % (off, bytes(magic)))
    if ver == 1:
        if reserved or dlen:
            raise FrameError("frame at %d: reserved bytes set" % off)
    elif ver == 2:
        if reserved or dlen % 8 or dlen > MAX_DOMAIN:
            raise FrameError("frame at %d: bad domain field (%d bytes)" % (off, dlen))
    else:
        raise FrameError("frame at %d: unknown version %d" % (off, ver))
    if rank > MAX_RANK:
        raise FrameError("frame at %d: rank %d" % (off, rank))
    start = off + HEADER.size + 8 * rank + dlen
    if start > len(mv) or n > len(mv) - start:
        raise FrameError("frame at %d: truncated (needs %d bytes, %d left)" % (off, start - off + n, len(mv) - off))
    dims = struct.unpack_from("<%dQ" % rank, mv, off + HEADER.size)
    dom = bytes(mv[off + HEADER.size + 8 * rank:start])
    domain = dom.rstrip(b"\0")
    if len(dom) - len(domain) >= 8 or b"\0" in domain:
        raise FrameError("frame at %d: malformed domain" % off)
    try:
        domain_s = domain.decode("ascii")
    except UnicodeDecodeError:
        raise FrameError("frame at %d: domain is not ASCII" % off) from None
    end = start + n
    payload = mv[start:end]
    if verify and zlib.crc32(payload) != crc:
        raise FrameError("frame at %d: checksum mismatch" % off)
    whole = mv[off:end]
    if kind == 2:
        if layout or rank:
            raise FrameError("frame at %d: raw frame with layout/shape" % off)
        return Frame(kind="raw", domain=domain_s, data=payload, media=MEDIA.get(dtype, "unknown"), raw=whole), end
    if kind != 1:
        raise FrameError("frame at %d: kind %d" % (off, kind))
    if dtype not in DTYPES:
        raise FrameError("frame at %d: dtype %d" % (off, dtype))
    if RANK_OF.get(layout) != rank:
        raise FrameError("frame at %d: layout %d with %d dims" % (off, layout, rank))
    name, npd = DTYPES[dtype]
    count = 1
    for d in dims:
        if d == 0 or d > 1 << 31:
            raise FrameError("frame at %d: dim %d" % (off, d))
        count *= d
    if count * npd.itemsize != n:
        raise FrameError("frame at %d: shape %s needs %d bytes, payload has %d" % (off, dims, count * npd.itemsize, n))
    arr = np.frombuffer(payload, dtype=npd).reshape(dims)
    return Frame(kind="tensor", domain=domain_s, array=arr, dtype=name, layout=LAYOUTS[layout], raw=whole), end


def parse(buf, verify: bool = True) -> List[Frame]:
    """Parses every frame in ``buf`` (bytes, bytearray, memoryview or any buffer)."""
    mv = memoryview(buf).cast("B")
    out, off = [], 0
    while off < len(mv):
        f, off = parse_one(mv, off, verify)
        out.append(f)
    return out

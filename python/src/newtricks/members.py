"""A sample's members that are not media (labels, captions, metadata), decoded by the rules
WebDataset's default decoder uses (webdataset.autodecode's basic handlers, 1.0), so a
WebDataset user sees the values she expects:

=========================================  ======================================
extension (after the member name's last dot)  value
=========================================  ======================================
``cls`` ``cls2`` ``index`` ``inx`` ``id``  ``int`` (``int(data)``)
``txt`` ``text`` ``transcript``            ``str`` (UTF-8)
``json`` ``jsn``                           the decoded JSON value
anything else                              the raw ``bytes``
=========================================  ======================================

Formats that can carry code (pickles, torch files) are never decoded: their bytes are given
as they are. The Go reader's ``reader.Decode`` follows the same table, value for value.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Mapping

from .errors import NewtricksError

_INT = frozenset(("cls", "cls2", "index", "inx", "id"))
_TEXT = frozenset(("txt", "text", "transcript"))
_JSON = frozenset(("json", "jsn"))


def extension(name: str) -> str:
    """The extension the decoder looks at: the part after the last dot, lower-cased."""
    return name.rsplit(".", 1)[-1].lower()


def decode_member(name: str, data: bytes) -> Any:
    """Decodes one member by the table above; a member that does not parse as its extension
    says raises NewtricksError naming it."""
    ext = extension(name)
    try:
        if ext in _INT:
            if not isinstance(data, (bytes, bytearray)) or not data.strip(b" \t\n\r\v\f"):
                raise ValueError("empty")
            return int(bytes(data).decode("ascii"))
        if ext in _TEXT:
            return bytes(data).decode("utf-8")
        if ext in _JSON:
            return json.loads(bytes(data))
    except (ValueError, UnicodeDecodeError) as e:
        raise NewtricksError("member %r: %s" % (name, e), "INVALID_ARGUMENT") from None
    return bytes(data)


def decode_members(members: Mapping[str, bytes]) -> Dict[str, Any]:
    """decode_member for every member, in order."""
    return {n: decode_member(n, d) for n, d in members.items()}

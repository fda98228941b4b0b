"""What a deleted file took away: the names it defined, for the search of their remaining uses.

A deleted file is reviewed for what it breaks, not line by line: its unit carries the top-level
definitions of the old text (functions from the tree-sitter spans of functions.py, classes by a
small pattern), and review/deleted.py looks for them in the new tree. The unit's patch then
lists the names and their uses instead of the whole deleted text, so it stays cheap.
"""

from __future__ import annotations

import re

from redline.diff.functions import function_spans

MAX_SYMBOLS = 40  # per file: a deleted module rarely exports more that anybody calls
MIN_SYMBOL_CHARS = 3  # shorter names (`f`, `go`) match everywhere and tell nothing
# A class (or struct, interface, type) defined at the top of the file, in the usual languages.
_TYPE_DEF = re.compile(
    r"^(?:export\s+(?:default\s+)?)?(?:pub(?:\(\w+\))?\s+)?(?:abstract\s+|final\s+|public\s+)*"
    r"(?:class|struct|interface|enum|trait|type)\s+([A-Za-z_$][\w$]*)",
    re.MULTILINE,
)
# Not worth a search: entry points and test functions nobody calls by name, dunder methods.
_NOT_SEARCHED = re.compile(r"^(?:main|test\w*|Test\w*|setup|teardown|__\w+__)$")


def deleted_symbols(path: str, old_text: str) -> list[str]:
    """Top-level names the old text defined (functions, then types), in file order, deduplicated.
    Methods are left out: they are called through objects, where a name search would mostly
    find other classes' methods of the same name."""
    spans = function_spans(path, old_text.encode("utf-8", errors="surrogatepass"))
    names = [span.name for span in spans if "." not in span.name]
    names += _TYPE_DEF.findall(old_text)
    out = [
        name
        for name in dict.fromkeys(names)
        if len(name) >= MIN_SYMBOL_CHARS and not _NOT_SEARCHED.match(name)
    ]
    return out[:MAX_SYMBOLS]

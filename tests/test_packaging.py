"""The package as it installs: a wheel built from a copy of the repository holds one import name,
``nertz_env``, with its type marker, the shipped policy and the licence; the version has one
source, ``nertz_env.__version__``, which the metadata, CITATION.cff and the changelog follow."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from email.parser import Parser
from pathlib import Path

import pytest

import nertz_env

ROOT = Path(__file__).resolve().parent.parent
# What a build must not see: environments, caches and earlier build outputs (a stale build/ would
# leak deleted files into the wheel).
NOT_SOURCES = shutil.ignore_patterns(".git", ".venv*", "__pycache__", "build", "dist", "*.egg-info", "site",
                                     "runs", ".pytest_cache", ".ruff_cache", ".mypy_cache", ".hypothesis",
                                     ".ipynb_checkpoints")
DIST_INFO = f"nertz_env-{nertz_env.__version__}.dist-info"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Iterator[zipfile.ZipFile]:
    pytest.importorskip("setuptools", minversion="77.0.3", reason="PEP 639 licence fields need setuptools>=77")
    src = tmp_path_factory.mktemp("src") / "nertz-env"
    shutil.copytree(ROOT, src, ignore=NOT_SOURCES)
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(out), str(src)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    (path,) = out.glob("*.whl")
    with zipfile.ZipFile(path) as zf:
        yield zf


def test_wheel_installs_one_import_name(wheel):
    names = wheel.namelist()
    tops = {name.split("/", 1)[0] for name in names}
    assert tops == {"nertz_env", DIST_INFO}
    assert wheel.read(f"{DIST_INFO}/top_level.txt").decode().split() == ["nertz_env"]
    for sub in ("agents", "training", "benchmarks", "engine", "integrations"):
        assert f"nertz_env/{sub}/__init__.py" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith((".nbi", ".nbc", ".pyc"))]


def test_wheel_ships_type_marker_policies_and_licence(wheel):
    names = set(wheel.namelist())
    assert "nertz_env/py.typed" in names
    policies = sorted(p.name for p in (ROOT / "agents" / "policies").iterdir() if p.is_file())
    assert "ppo.pt" in policies
    for name in policies:
        assert f"nertz_env/agents/policies/{name}" in names
    assert wheel.read("nertz_env/agents/policies/ppo.pt") == (ROOT / "agents" / "policies" / "ppo.pt").read_bytes()
    assert wheel.read(f"{DIST_INFO}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()


def test_wheel_metadata(wheel):
    meta = Parser().parsestr(wheel.read(f"{DIST_INFO}/METADATA").decode())
    assert meta["Name"] == "nertz-env"
    assert meta["Version"] == nertz_env.__version__
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert "Typing :: Typed" in meta.get_all("Classifier")
    entry_points = wheel.read(f"{DIST_INFO}/entry_points.txt").decode()
    assert "nertz = nertz_env.training.cli:main" in entry_points


def test_version_has_one_source():
    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11's tomllib")
    version = nertz_env.__version__
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"] and pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "nertz_env.__version__"}
    citation = (ROOT / "CITATION.cff").read_text().splitlines()
    assert f"version: {version}" in citation
    assert f"## [{version}]" in (ROOT / "CHANGELOG.md").read_text()

"""The layout of the code (STYLE): the engine is sealed and reached through one door, imports only
point down, and rooms stay small."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "nertz_env" / "engine"
STDLIB = set(sys.stdlib_module_names)
# The layers from the bottom up; a module may import only from its own layer or those below.
LAYERS = {"nertz_env": 0, "nertz_env.agents": 1, "nertz_env.benchmarks": 1, "nertz_env.training": 2}
FOLDERS = {"nertz_env": ROOT / "nertz_env", "nertz_env.agents": ROOT / "agents",
           "nertz_env.benchmarks": ROOT / "benchmarks", "nertz_env.training": ROOT / "training"}  # fmt: skip


def imports(path: Path) -> list[tuple[str, int]]:
    """Every module ``path`` imports (at any depth of the file), with its line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, node.lineno))
            found += [(f"{node.module}.{alias.name}", node.lineno) for alias in node.names]
    return found


def layer_of(module: str) -> str | None:
    for name in sorted(LAYERS, key=len, reverse=True):
        if module == name or module.startswith(name + "."):
            return name
    return None


def test_the_engine_imports_nothing_outside_itself():
    for path in sorted(ENGINE.glob("*.py")):
        for module, line in imports(path):
            top = module.split(".")[0]
            inside = module == "nertz_env.engine" or module.startswith("nertz_env.engine.")
            assert inside or top in ("numpy", "numba") or top in STDLIB, f"{path.name}:{line} imports {module}"


@pytest.mark.parametrize("package", sorted(FOLDERS))
def test_imports_point_down(package):
    for path in sorted(FOLDERS[package].rglob("*.py")):
        if package == "nertz_env" and ENGINE in path.parents:
            continue
        for module, line in imports(path):
            layer = layer_of(module)
            if layer is None or (package == "nertz_env" and layer != "nertz_env"):
                assert layer is None or layer == "nertz_env", f"{path.relative_to(ROOT)}:{line} imports {module}"
                continue
            assert LAYERS[layer] <= LAYERS[package], f"{path.relative_to(ROOT)}:{line} imports {module} (upward)"


def test_only_the_engine_door_is_used():
    """Outside the engine, only ``nertz_env.engine`` and its named numbers (``constants``) are used:
    nothing reaches into ``engine.core``, ``engine.tick``, ``engine.state`` ..."""
    allowed = {"nertz_env.engine", "nertz_env.engine.constants"}
    for folder in FOLDERS.values():
        for path in sorted(folder.rglob("*.py")):
            if ENGINE in path.parents:
                continue
            for module, line in imports(path):
                if module.startswith("nertz_env.engine.") and module not in allowed:
                    parent = module.rsplit(".", 1)[0]
                    assert parent in allowed, f"{path.relative_to(ROOT)}:{line} reaches into {module}"


def test_the_door_names_the_whole_rules_api_on_one_screen():
    from nertz_env import engine

    for name in engine.__all__:
        assert hasattr(engine, name), name
    for needed in ("legal_row", "play_own_move", "lay_on_foundation_tops", "step", "deal", "r7_score",
                   "partner_of", "builds_on_nertz", "fits_foundation", "play_game_tick", "step_batch"):  # fmt: skip
        assert needed in engine.__all__
        assert needed in engine.__doc__, f"the door's docstring does not name {needed}"
    assert len((ENGINE / "__init__.py").read_text().splitlines()) <= 120


# Rooms of a readable size: ~400 lines a file, 80 a function. Nothing is excepted.
FILE_LIMIT, FUNCTION_LIMIT = 420, 80
EXCEPTED_FILES: set[str] = set()
EXCEPTED_FUNCTIONS: set[str] = set()


def _sources():
    """Every Python file of the package's folders and of the tests."""
    for folder in [*FOLDERS.values(), ROOT / "tests"]:
        yield from sorted(folder.rglob("*.py"))


def test_no_file_is_over_the_limit():
    over = []
    for path in _sources():
        name = str(path.relative_to(ROOT))
        n = len(path.read_text().splitlines())
        if n > FILE_LIMIT and name not in EXCEPTED_FILES:
            over.append(f"{name}: {n} lines")
    assert not over, over


def test_no_function_is_over_the_limit():
    over = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                key = f"{path.relative_to(ROOT)}:{node.name}"
                if n > FUNCTION_LIMIT and key not in EXCEPTED_FUNCTIONS:
                    over.append(f"{key}: {n} lines")
    assert not over, over


def test_compiled_code_outside_the_engine_is_stamped_with_the_engine():
    """A kernel outside the engine may inline engine code: its module stamps its cache with the
    engine's fingerprint (``engine.stamp_compiled``), or an engine edit would leave it stale."""
    for folder in FOLDERS.values():
        for path in sorted(folder.rglob("*.py")):
            text = path.read_text()
            if ENGINE in path.parents or "njit" not in text:
                continue
            assert "stamp_compiled(globals()" in text, f"{path.relative_to(ROOT)} compiles kernels without the stamp"

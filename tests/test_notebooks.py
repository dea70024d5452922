"""The notebooks run top to bottom on a fresh kernel, with tiny budgets, in a scratch directory.

Each notebook reads its budget from the environment (``NERTZ_NB_DEALS``, ``NERTZ_NB_TRAIN_STEPS``),
which the kernel inherits, and writes its files (replays, ``runs/``) to its working directory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebook tests need nbformat: pip install 'nertz-env[dev]'")
nbclient = pytest.importorskip("nbclient", reason="the notebook tests need nbclient: pip install 'nertz-env[dev]'")
pytest.importorskip("ipykernel", reason="the notebook tests need ipykernel: pip install 'nertz-env[dev]'")
pytest.importorskip("matplotlib", reason="the notebooks plot with matplotlib: pip install 'nertz-env[training]'")

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
TINY = {"NERTZ_NB_DEALS": "20", "NERTZ_NB_TRAIN_STEPS": "3000"}
# What each notebook leaves in its working directory (and so not in the repository).
WRITES = {"01_quickstart": "quickstart_replay.html", "02_baselines": None, "03_training": "runs/*/evals.jsonl"}


def test_the_notebooks_are_committed_without_outputs():
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        book = nbformat.read(path, as_version=4)
        for cell in book.cells:
            if cell.cell_type == "code":
                assert not cell.outputs and cell.execution_count is None, f"{path.name}: clear the outputs"


@pytest.mark.parametrize("name", ["01_quickstart", "02_baselines", "03_training"])
def test_notebook_runs_top_to_bottom(name, tmp_path, monkeypatch):
    if name == "03_training":
        pytest.importorskip("torch", reason="03_training needs torch: pip install 'nertz-env[training]'")
    for key, value in TINY.items():
        monkeypatch.setenv(key, value)
    # A headless MPLBACKEND (CI sets Agg) would override the kernel's inline backend: no figures.
    monkeypatch.delenv("MPLBACKEND", raising=False)
    book = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    client = nbclient.NotebookClient(
        book, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError, with the failing cell and traceback, on any error
    outputs = [o for cell in book.cells if cell.cell_type == "code" for o in cell.outputs]
    assert any("image/png" in o.get("data", {}) for o in outputs), f"{name} drew no figure"
    if WRITES[name]:
        assert list(tmp_path.glob(WRITES[name])), f"{name} did not write {WRITES[name]} in its working directory"

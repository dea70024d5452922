"""Numba's on-disk cache, made always right for code that inlines other files.

Numba stamps a cached function with its own file only (modification time and size), but the
engine's kernels carry compiled copies of functions from every engine file, and the agents'
kernels carry copies of the engine's rules. ``stamp_compiled`` adds a fingerprint of the sources a
module's kernels may inline (the whole engine, plus any folders named) to each of their cache
stamps, so that an edit to any of them recompiles every kernel that could hold a stale copy.

``ensure_cache_dir`` keeps a read-only install importable: numba caches next to the source when it
can write there, else under the user's cache folder; when neither is writable the cache goes to a
private folder under the system's temporary directory (or, failing that, caching is off).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

ENGINE_DIR = Path(__file__).resolve().parent


def fingerprint(folders: Iterable[Path] = ()) -> str:
    """A sha256 over the Python sources of the engine and of ``folders``."""
    digest = hashlib.sha256()
    for folder in (ENGINE_DIR, *folders):
        for path in sorted(Path(folder).glob("*.py")):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def stamp_compiled(namespace: Mapping[str, Any], *folders: Path) -> int:
    """Stamp the cache entries of every numba dispatcher defined in the module ``namespace`` with
    the fingerprint of the engine and ``folders``; returns how many were stamped. Call it at the
    end of the module, before anything compiles."""
    module = namespace.get("__name__")
    stamp = fingerprint(folders)
    count = 0
    for value in list(namespace.values()):
        if getattr(getattr(value, "py_func", None), "__module__", None) != module:
            continue
        cache_file = getattr(getattr(value, "_cache", None), "_cache_file", None)
        if cache_file is not None and hasattr(cache_file, "_source_stamp"):
            cache_file._source_stamp = (cache_file._source_stamp, stamp)
            count += 1
    return count


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
        return True
    except OSError:
        return False


def ensure_cache_dir() -> str | None:
    """Make sure numba has somewhere to cache, before any engine function is compiled: the source
    folder when writable, else numba's user-wide cache folder, else ``NUMBA_CACHE_DIR`` set to a
    private temporary folder. Returns the folder chosen when it had to set one."""
    import numba

    if numba.config.CACHE_DIR or _writable(ENGINE_DIR / "__pycache__"):
        return None
    home_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path("~/.cache").expanduser()) / "numba"
    if _writable(home_cache):
        return None
    fallback = Path(tempfile.gettempdir()) / f"nertz_env-numba-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    if not _writable(fallback):
        return None
    numba.config.CACHE_DIR = str(fallback)
    os.environ["NUMBA_CACHE_DIR"] = str(fallback)
    return str(fallback)

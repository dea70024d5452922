"""A Griffe extension for the API reference: setuptools' ``package-dir`` installs the repository's
``agents/``, ``training/`` and ``benchmarks/`` folders as ``nertz_env.agents``,
``nertz_env.training`` and ``nertz_env.benchmarks``, which reading ``nertz_env/`` alone does not
find. When Griffe has loaded a package, this loads each folder that pyproject.toml maps to a direct
subpackage of it and attaches it there, so the reference shows the installed names."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import griffe

if sys.version_info >= (3, 11):
    import tomllib
else:  # the docs extra installs tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


class PackageDir(griffe.Extension):
    def __init__(self) -> None:
        setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
        self.package_dir: dict[str, str] = setuptools.get("package-dir", {})

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        for dotted, folder in self.package_dir.items():
            parent, _, name = dotted.rpartition(".")
            if parent != pkg.path or name in pkg.members:
                continue
            # loaded under the folder's own name, then moved under its installed parent
            sub = loader.load(ROOT / folder, try_relative_path=True)
            loader.modules_collection.del_member(sub.name)
            pkg.set_member(name, sub)
            sub.name = name

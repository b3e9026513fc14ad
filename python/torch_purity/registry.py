"""Every Purity pass by its name: the target-neutral Torch passes
(`torch_purity.passes`) and IREE's (`torch_purity.iree.passes`).

Lazy: a pass module is imported only when its pass is used. Each pass has
its lit test at `lit_test_path(name)` (test/Passes/ or test/Passes/IREE/),
which the registry test requires.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import PurePosixPath

from . import passes as torch_passes
from .iree import passes as iree_passes
from .passes.base import ModulePass

# pass name -> (package, lit test folder under test/Passes)
_PACKAGES = ((torch_passes, ""), (iree_passes, "IREE"))


def _loader(package: str, module: str, cls: str) -> Callable[[], type[ModulePass]]:
    return lambda: getattr(importlib.import_module(f"{package}.{module}"), cls)


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    name: _loader(package.__name__, module, cls)
    for package, _ in _PACKAGES
    for name, (module, cls) in package.PASS_MODULES.items()
}
_LIT_FOLDERS = {name: folder for package, folder in _PACKAGES for name in package.PASS_MODULES}


def get_pass(name: str) -> type[ModulePass]:
    return PASSES[name]()


def lit_test_path(name: str) -> PurePosixPath:
    """The pass's lit test, relative to test/Passes."""
    return PurePosixPath(_LIT_FOLDERS[name], f"{name}.mlir")

"""Names a package imports from its modules on first use, so importing the package stays cheap
(``import pruner_ms.cli`` must not import TVM before the command line is read; see
:mod:`pruner_ms.integration.workarounds.torch_import`)."""
from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_exports(package: str, namespace: dict, exports: dict[str, str]) -> tuple[Callable, Callable]:
    """A module ``__getattr__`` and ``__dir__`` for ``package`` that import each name of ``exports``
    (name -> module, relative to ``package``) when it is first read, and keep it in ``namespace``
    (the package's ``globals()``) so the next read is an ordinary attribute lookup."""

    def __getattr__(name: str):
        if name in exports:
            value = getattr(importlib.import_module(exports[name], package), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__

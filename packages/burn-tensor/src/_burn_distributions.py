"""Which distribution provides each `burn.<sub>` package, and a hint when one is missing.

burn is a family of distributions sharing the `burn` namespace (PEP 420), so without help
`import burn.module` in an environment without burn-nn fails with a bare
`No module named 'burn.module'`. burn-tensor is the one distribution every other depends on; it
ships this module at the top level of `site-packages` (outside `burn.tensor`, so loading it
imports nothing else) and a `.pth` file that registers `MissingDistributionFinder` at interpreter
start. The finder sits last on `sys.meta_path`: it is asked only after every real finder came up
empty, and it answers only for the names below whose distribution is not installed, with an
error naming the distribution. Anything else falls through to Python's usual error.
"""

import sys

# `burn.<sub>` -> the distribution that provides it (the architecture's package table).
PROVIDED_BY: dict[str, str] = {
    "tensor": "burn-tensor",
    "backend": "burn-tensor",
    "ndarray": "burn-ndarray",
    "autodiff": "burn-autodiff",
    "wgpu": "burn-wgpu",
    "backend_tests": "burn-backend-tests",
    "record": "burn-record",
    "module": "burn-nn",
    "config": "burn-nn",
    "nn": "burn-nn",
    "optim": "burn-nn",
    "prelude": "burn-nn",
    "data": "burn-data",
    "huggingface": "burn-huggingface",
    "train": "burn-train",
    "collective": "burn-collective",
    "fusion": "burn-fusion",
    "onnx": "burn-import",
    "pytorch": "burn-import",
    "safetensors": "burn-import",
}


def install_hint(distribution: str) -> str:
    """How to get `distribution`, for error messages (nothing is published on an index yet)."""
    return (
        f"install the {distribution} distribution; from a checkout of burn: "
        f"uv build --wheel --package {distribution}, then pip install the wheel"
    )


def _installed(distribution: str) -> bool:
    # Imported here, on a miss only: the module is loaded at every interpreter start.
    import importlib.metadata

    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _importing() -> bool:
    """True when an import is loading the module, False for a probe such as
    `importlib.util.find_spec(name)`, which must keep answering None for a missing module.

    CPython's import system calls meta-path finders from `_find_spec`, itself called by
    `_find_and_load_unlocked` for an import and by `importlib.util.find_spec` for a probe. On an
    interpreter laid out otherwise this answers False and Python's own error stands.
    """
    try:
        caller = sys._getframe(3)  # 0: here, 1: find_spec, 2: _find_spec, 3: its caller
    except ValueError:
        return False
    return caller.f_code.co_name == "_find_and_load_unlocked"


class MissingDistributionFinder:
    """A meta-path finder that only turns "no module burn.X" into "install burn-Y"."""

    @classmethod
    def find_spec(cls, fullname: str, path: object = None, target: object = None) -> None:
        parts = fullname.split(".")
        if len(parts) < 2 or parts[0] != "burn":
            return None
        distribution = PROVIDED_BY.get(parts[1])
        if distribution is None or not _importing() or _installed(distribution):
            return None  # unknown name, a probe, or a gap in an installed package: as Python does
        package = f"burn.{parts[1]}"
        raise ModuleNotFoundError(
            f"No module named {fullname!r}: {package} is part of the {distribution} "
            f"distribution, which is not installed ({install_hint(distribution)})",
            name=fullname,
        )


def install_finder() -> None:
    """Register the finder last on `sys.meta_path` (once; called from the `.pth` file)."""
    if not any(finder is MissingDistributionFinder for finder in sys.meta_path):
        sys.meta_path.append(MissingDistributionFinder)

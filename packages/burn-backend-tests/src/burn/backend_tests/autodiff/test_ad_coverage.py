"""Every op of `DIFFERENTIABLE_OPS` has a finite-difference test (the torch side is checked
in `test_ad_torch.py`, which needs torch)."""

from pathlib import Path

from burn.backend_tests.autodiff.differentiable_ops import DIFFERENTIABLE_OPS, fd_spelling

HERE = Path(__file__).parent


def _fd_sources() -> str:
    skip = {"test_ad_torch.py", "test_ad_coverage.py"}
    texts = (p.read_text() for p in sorted(HERE.glob("test_ad_*.py")) if p.name not in skip)
    return "\n".join(t for t in texts if "check_grads(" in t)


def test_ops_are_listed_once():
    assert len(set(DIFFERENTIABLE_OPS)) == len(DIFFERENTIABLE_OPS)


def test_every_op_has_a_finite_difference_test():
    source = _fd_sources()
    missing = [op for op in DIFFERENTIABLE_OPS if fd_spelling(op) not in source]
    assert not missing, f"no finite-difference test spells {missing}"

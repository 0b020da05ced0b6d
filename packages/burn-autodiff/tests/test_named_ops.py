"""Every named float op of the contract is classified by the decorator: a rule, or no gradient."""

from burn.autodiff import Autodiff, named
from burn.autodiff.backend import _HAS_RULE, AUTODIFF_OPS
from burn.backend import Backend
from burn.backend.ops import FLOAT_OPS
from burn.ndarray import NdArray


def test_every_float_op_has_a_rule_or_carries_no_gradient():
    unclassified = FLOAT_OPS - _HAS_RULE - named.NOT_DIFFERENTIABLE - AUTODIFF_OPS
    assert not unclassified, f"float ops without a rule: {sorted(unclassified)}"
    assert not (_HAS_RULE & named.NOT_DIFFERENTIABLE)


def test_decorated_ops_read_like_the_contract():
    backend = Autodiff(NdArray)
    for op in ("float_add", "float_gather", "int_sum_dim", "conv2d", "float_zeros"):
        assert getattr(backend, op).__doc__ == getattr(Backend, op).__doc__

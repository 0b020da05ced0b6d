"""squeeze / squeeze_dims / unsqueeze / unsqueeze_dim / unsqueeze_dims."""

from burn.backend_tests.helpers import assert_equal, random_tensor, ref, tensor


def test_should_squeeze(backend, rng):
    a = random_tensor(backend, rng, (2, 1, 4))
    assert_equal(a.squeeze(1), ref(a).reshape(2, 4))
    assert_equal(a.squeeze(-2), ref(a).reshape(2, 4))


def test_should_squeeze_all_size_one(backend, rng):
    a = random_tensor(backend, rng, (1, 3, 1, 2, 1))
    assert a.squeeze().dims() == [3, 2]
    assert tensor(backend, [[5.0]]).squeeze().dims() == [1]


def test_should_squeeze_dims(backend, rng):
    a = random_tensor(backend, rng, (1, 3, 1, 2))
    assert a.squeeze_dims([0, 2]).dims() == [3, 2]
    assert a.squeeze_dims([-2]).dims() == [1, 3, 2]
    assert_equal(a.squeeze_dims([0, -2]), ref(a).reshape(3, 2))


def test_should_unsqueeze(backend, rng):
    a = random_tensor(backend, rng, (3, 2))
    assert a.unsqueeze().dims() == [1, 3, 2]
    assert a.unsqueeze(4).dims() == [1, 1, 3, 2]
    assert a.unsqueeze(2).dims() == [3, 2]


def test_should_unsqueeze_dim(backend, rng):
    a = random_tensor(backend, rng, (3, 2))
    assert a.unsqueeze_dim(0).dims() == [1, 3, 2]
    assert a.unsqueeze_dim(1).dims() == [3, 1, 2]
    assert a.unsqueeze_dim(2).dims() == [3, 2, 1]
    assert a.unsqueeze_dim(-1).dims() == [3, 2, 1]
    assert_equal(a.unsqueeze_dim(1), ref(a).reshape(3, 1, 2))


def test_should_unsqueeze_dims(backend, rng):
    a = random_tensor(backend, rng, (3, 2))
    assert a.unsqueeze_dims([0, 2]).dims() == [1, 3, 1, 2]
    assert a.unsqueeze_dims([0, -1]).dims() == [1, 3, 2, 1]
    assert a.unsqueeze_dims([1, 2]).dims() == [3, 1, 1, 2]


def test_squeeze_int_bool(backend):
    assert_equal(tensor(backend, [[1, 2]]).squeeze(0), [1, 2])
    assert_equal(tensor(backend, [[True], [False]]).squeeze(1), [True, False])

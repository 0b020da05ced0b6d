"""The Tensor API's first example, exactly as the README and the Foundation issue show it."""


def test_first_steps_run_verbatim(capsys):
    from burn.backend import NdArray
    from burn.tensor import Bool, Int, Tensor

    B = NdArray
    device = B.device()
    t1 = Tensor[B, 2].from_data([[2.0, 3.0], [4.0, 5.0]], device)
    t2 = Tensor[B, 2].ones_like(t1)
    print(t1 + t2)
    x = Tensor.from_data([1.0, 2.0, 3.0, 4.0], device)
    mn, mx = x.min(), x.max()
    print(((x - mn) / (mx - mn)).to_data())
    labels = Tensor[B, 1, Int].arange(0, 5, device)
    mask: Tensor = t1.greater_elem(3.0)
    assert mask.kind is Bool and labels.dims() == [5]

    out = capsys.readouterr().out
    assert "[[3.0, 4.0],\n [5.0, 6.0]]" in out
    assert "value=[0.0, 0.33333334, 0.6666667, 1.0]" in out

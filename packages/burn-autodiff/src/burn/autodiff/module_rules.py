"""Module ops under autodiff: the inner backend's forward, the contract's backward ops as rules.

The contract's defaults for these ops are composed from the core and would differentiate
through it too, but one node per module op keeps the inner backend's fast kernels (im2col
convolutions, strided pools) for both passes. `unfold4d` has no backward op in the contract,
so it keeps the composed default.
"""

from __future__ import annotations


def _conv(name: str):
    def forward(self, x, weight, bias, options):
        inner = self._inner
        xv, wv = x.value, weight.value
        bv = None if bias is None else bias.value
        out = getattr(inner, name)(xv, wv, bv, options)
        x_backward = getattr(inner, f"{name}_x_backward")
        w_backward = getattr(inner, f"{name}_weight_backward")
        b_backward = getattr(inner, f"{name}_bias_backward")
        transposed = name.startswith("conv_transpose")

        def backward(g, tracked):
            gx = gw = gb = None
            if tracked[0]:
                gx = x_backward(wv, g, options) if transposed else x_backward(xv, wv, g, options)
            if tracked[1]:
                gw = w_backward(xv, wv, g, options)
            if len(tracked) > 2 and tracked[2]:
                gb = b_backward(xv, bv, g)
            return (gx, gw, gb)[: len(tracked)]

        inputs = (x, weight) if bias is None else (x, weight, bias)
        return self._track(out, inputs, backward, name)

    forward.__name__ = name
    return forward


def _avg_pool(name: str):
    def forward(self, x, kernel_size, stride, padding, count_include_pad):
        inner = self._inner
        xv = x.value
        out = getattr(inner, name)(xv, kernel_size, stride, padding, count_include_pad)
        rule = getattr(inner, f"{name}_backward")
        return self._track(
            out,
            (x,),
            lambda g, t: (rule(xv, g, kernel_size, stride, padding, count_include_pad),),
            name,
        )

    forward.__name__ = name
    return forward


def _max_pool(name: str):
    def with_indices(self, x, kernel_size, stride, padding, dilation):
        inner = self._inner
        xv = x.value
        forward = getattr(inner, f"{name}_with_indices")
        out, idx = forward(xv, kernel_size, stride, padding, dilation)
        rule = getattr(inner, f"{name}_with_indices_backward")
        tracked = self._track(
            out,
            (x,),
            lambda g, t: (rule(xv, kernel_size, stride, padding, dilation, g, idx),),
            name,
        )
        return tracked, self._untracked(idx)

    def plain(self, x, kernel_size, stride, padding, dilation):
        return with_indices(self, x, kernel_size, stride, padding, dilation)[0]

    with_indices.__name__ = f"{name}_with_indices"
    plain.__name__ = name
    return plain, with_indices


def _adaptive(name: str):
    def forward(self, x, output_size):
        inner = self._inner
        xv = x.value
        rule = getattr(inner, f"{name}_backward")
        return self._track(
            getattr(inner, name)(xv, output_size), (x,), lambda g, t: (rule(xv, g),), name
        )

    forward.__name__ = name
    return forward


class ModuleRules:
    """Mixed into `AutodiffBackend` ahead of the contract's defaults."""

    conv1d = _conv("conv1d")
    conv2d = _conv("conv2d")
    conv3d = _conv("conv3d")
    conv_transpose1d = _conv("conv_transpose1d")
    conv_transpose2d = _conv("conv_transpose2d")
    conv_transpose3d = _conv("conv_transpose3d")
    avg_pool1d = _avg_pool("avg_pool1d")
    avg_pool2d = _avg_pool("avg_pool2d")
    max_pool1d, max_pool1d_with_indices = _max_pool("max_pool1d")
    max_pool2d, max_pool2d_with_indices = _max_pool("max_pool2d")
    adaptive_avg_pool1d = _adaptive("adaptive_avg_pool1d")
    adaptive_avg_pool2d = _adaptive("adaptive_avg_pool2d")

    def interpolate(self, x, output_size, options):
        inner = self._inner
        xv = x.value
        return self._track(
            inner.interpolate(xv, output_size, options),
            (x,),
            lambda g, t: (inner.interpolate_backward(xv, g, output_size, options),),
            "interpolate",
        )

    def embedding(self, weights, indices):
        inner = self._inner
        wv, iv = weights.value, indices.value
        return self._track(
            inner.embedding(wv, iv),
            (weights, indices),
            lambda g, t: (inner.embedding_backward(wv, g, iv), None),
            "embedding",
        )

    # Activations with a backward op in the contract: one node instead of several.
    def relu(self, x):
        inner = self._inner
        out = inner.relu(x.value)
        return self._track(out, (x,), lambda g, t: (inner.relu_backward(out, g),), "relu")

    def gelu(self, x):
        inner = self._inner
        xv = x.value
        return self._track(inner.gelu(xv), (x,), lambda g, t: (inner.gelu_backward(xv, g),), "gelu")

    def sigmoid(self, x):
        inner = self._inner
        out = inner.sigmoid(x.value)
        return self._track(out, (x,), lambda g, t: (inner.sigmoid_backward(out, g),), "sigmoid")

    def log_sigmoid(self, x):
        inner = self._inner
        xv = x.value
        return self._track(
            inner.log_sigmoid(xv),
            (x,),
            lambda g, t: (inner.log_sigmoid_backward(xv, g),),
            "log_sigmoid",
        )

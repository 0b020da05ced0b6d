"""Module ops under autodiff: the inner backend's forward, the contract's backward ops as rules.

The contract's defaults for these ops are composed from the core and would differentiate
through it too, but one node per module op keeps the inner backend's fast kernels (im2col
convolutions, strided pools) for both passes. `unfold4d` has no backward op in the contract,
so it keeps the composed default.
"""

from __future__ import annotations

from burn.autodiff import rules
from burn.backend import Backend


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
        if x.node is None:  # nothing to differentiate: the inner op, without indices
            forward = getattr(self._inner, name)
            return self._untracked(forward(x.value, kernel_size, stride, padding, dilation))
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

    def unfold4d(self, x, kernel_size, options):
        inner = self._inner
        xv = x.value
        return self._track(
            inner.unfold4d(xv, kernel_size, options),
            (x,),
            lambda g, t: (inner.unfold4d_backward(xv, g, kernel_size, options),),
            "unfold4d",
        )

    # The public building blocks are linear: each one's gradient is its adjoint block.
    def im2col(self, x, kernel, stride, dilation, padding, out, value=0):
        inner = self._inner
        size = inner.shape(x.value)[2:]
        return self._track(
            inner.im2col(x.value, kernel, stride, dilation, padding, out, value),
            (x,),
            lambda g, t: (inner.col2im(g, kernel, stride, dilation, padding, size),),
            "im2col",
        )

    def col2im(self, cols, kernel, stride, dilation, padding, size):
        inner = self._inner
        out = inner.shape(cols.value)[3:]
        return self._track(
            inner.col2im(cols.value, kernel, stride, dilation, padding, size),
            (cols,),
            lambda g, t: (inner.im2col(g, kernel, stride, dilation, padding, out),),
            "col2im",
        )

    def resample(self, x, dim, index, weight):
        inner = self._inner
        size = inner.shape(x.value)[dim]
        return self._track(
            inner.resample(x.value, dim, index, weight),
            (x,),
            lambda g, t: (inner.resample_backward(g, dim, size, index, weight),),
            "resample",
        )

    def resample_backward(self, grad, dim, size, index, weight):
        inner = self._inner
        return self._track(
            inner.resample_backward(grad.value, dim, size, index, weight),
            (grad,),
            lambda g, t: (inner.resample(g, dim, index, weight),),
            "resample_backward",
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

    def softmax(self, x, dim):
        inner = self._inner
        out = inner.softmax(x.value, dim)
        return self._track(
            out, (x,), lambda g, t: (inner.softmax_backward(out, g, dim),), "softmax"
        )

    def log_softmax(self, x, dim):
        inner = self._inner
        out = inner.log_softmax(x.value, dim)
        return self._track(
            out, (x,), lambda g, t: (inner.log_softmax_backward(out, g, dim),), "log_softmax"
        )

    def cross_entropy(self, logits, targets):
        inner = self._inner
        lv, tv = logits.value, targets.value
        return self._track(
            inner.cross_entropy(lv, tv),
            (logits, targets),
            lambda g, t: (inner.cross_entropy_backward(lv, tv, g), None),
            "cross_entropy",
        )

    def linear(self, x, weight, bias):
        inner = self._inner
        xv, wv = x.value, weight.value
        out = inner.linear(xv, wv, None if bias is None else bias.value)

        def backward(g, tracked):
            gx = inner.linear_x_backward(wv, g) if tracked[0] else None
            gw = inner.linear_weight_backward(xv, g) if tracked[1] else None
            gb = inner.linear_bias_backward(g) if len(tracked) > 2 and tracked[2] else None
            return (gx, gw, gb)[: len(tracked)]

        inputs = (x, weight) if bias is None else (x, weight, bias)
        return self._track(out, inputs, backward, "linear")

    def dropout(self, x, prob):
        inner = self._inner
        out, mask = inner.dropout(x.value, prob)
        return (
            self._track(out, (x,), lambda g, t: (inner.float_mul(g, mask),), "dropout"),
            self._untracked(mask),
        )

    # Fused module ops with a backward op: one node (two for attention's two outputs).
    def layer_norm(self, x, gamma, beta, epsilon):
        inner = self._inner
        xv, gv = x.value, gamma.value

        def backward(g, tracked):
            return inner.layer_norm_backward(xv, gv, g, epsilon)

        out = inner.layer_norm(xv, gv, beta.value, epsilon)
        return self._track(out, (x, gamma, beta), backward, "layer_norm")

    def batch_norm(self, x, gamma, beta, epsilon):
        inner = self._inner
        xv, gv = x.value, gamma.value

        def backward(g, tracked):
            return inner.batch_norm_backward(xv, gv, g, epsilon)

        out, mean, var = inner.batch_norm(xv, gv, beta.value, epsilon)
        # The statistics are for running averages: no gradient flows through them.
        return (
            self._track(out, (x, gamma, beta), backward, "batch_norm"),
            self._untracked(mean),
            self._untracked(var),
        )

    def attention(self, query, key, value, mask, mask_value, dropout_mask, scale):
        inner = self._inner
        q, k, v = query.value, key.value, value.value
        m = None if mask is None else mask.value
        drop = None if dropout_mask is None else dropout_mask.value
        weights, context = inner.attention(q, k, v, m, mask_value, drop, scale)

        def backward(weights_grad, context_grad):
            return inner.attention_backward(
                q, k, v, weights, m, drop, scale, weights_grad, context_grad
            )

        inputs = (query, key, value)
        return (
            self._track(weights, inputs, lambda g, t: backward(g, None), "attention_weights"),
            self._track(context, inputs, lambda g, t: backward(None, g), "attention"),
        )

    # Activations without a backward op: the rule is written with the inner backend's ops.
    def leaky_relu(self, x, negative_slope):
        inner = self._inner
        xv = x.value

        def backward(g, tracked):
            negative = inner.float_lower_elem(xv, 0)
            return (inner.float_mask_where(g, negative, inner.float_mul_scalar(g, negative_slope)),)

        return self._track(inner.leaky_relu(xv, negative_slope), (x,), backward, "leaky_relu")

    def hard_sigmoid(self, x, alpha, beta):
        inner = self._inner
        xv = x.value

        def backward(g, tracked):
            y = inner.float_add_scalar(inner.float_mul_scalar(xv, alpha), beta)
            outside = inner.bool_or(inner.float_lower_elem(y, 0), inner.float_greater_elem(y, 1))
            return (inner.float_mask_fill(inner.float_mul_scalar(g, alpha), outside, 0),)

        return self._track(inner.hard_sigmoid(xv, alpha, beta), (x,), backward, "hard_sigmoid")

    def prelu(self, x, alpha):
        inner = self._inner
        xv, av = x.value, alpha.value
        a_shape = inner.shape(av)

        def backward(g, tracked):
            negative = inner.float_lower_elem(xv, 0)
            gx = ga = None
            if tracked[0]:
                gx = inner.float_mask_where(g, negative, inner.float_mul(g, av))
            if tracked[1]:
                zeros = inner.scalar_like(g, 0)
                ga = rules.unbroadcast(
                    inner, inner.float_mask_where(zeros, negative, inner.float_mul(g, xv)), a_shape
                )
            return gx, ga

        return self._track(inner.prelu(xv, av), (x, alpha), backward, "prelu")

    def log_sigmoid(self, x):
        inner = self._inner
        xv = x.value
        return self._track(
            inner.log_sigmoid(xv),
            (x,),
            lambda g, t: (inner.log_sigmoid_backward(xv, g),),
            "log_sigmoid",
        )


for _name, _method in list(vars(ModuleRules).items()):
    if callable(_method) and not _name.startswith("_"):
        _method.__doc__ = getattr(Backend, _name).__doc__
        _method.__wrapped__ = getattr(Backend, _name)

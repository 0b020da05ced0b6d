"""Translations of ONNX ops into Python lines, registered in `burn.onnx.codegen.EMITTERS`."""

from burn.onnx.emitters import elementwise, layers, more, shapes  # noqa: F401

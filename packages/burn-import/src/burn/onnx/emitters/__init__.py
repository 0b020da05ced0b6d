"""Translations of ONNX ops into Python lines, registered in `burn.onnx.codegen.EMITTERS`."""

from burn.onnx.emitters import control, elementwise, layers, ml, more, shapes, strings  # noqa: F401

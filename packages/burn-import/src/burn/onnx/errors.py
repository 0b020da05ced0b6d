"""Errors of the ONNX importer: each names the model file, the node and the op involved."""

from __future__ import annotations

from burn.tensor.errors import BurnError


class OnnxImportError(BurnError, ValueError):
    """A model that cannot be read, checked or translated (names the file and the node)."""


class UnsupportedOpsError(OnnxImportError):
    """A model with ops the importer cannot translate.

    Raised before anything is written, listing every unsupported op type at once with its count
    and the first node that uses it, so one run shows the whole gap instead of one op at a time.
    `unsupported` maps each op type to `(count, first node name)`.
    """

    def __init__(self, source: str, unsupported: dict[str, tuple[int, str]]):
        self.source = source
        self.unsupported = dict(unsupported)
        total = sum(count for count, _ in unsupported.values())
        lines = [
            f"{source}: {len(unsupported)} unsupported op type(s) in {total} node(s); "
            "nothing was generated:"
        ]
        for op, (count, first) in sorted(unsupported.items()):
            lines.append(f"  {op}: {count} node(s), first {first!r}")
        super().__init__("\n".join(lines))


class ImageDecodeError(BurnError, ValueError):
    """An ImageDecoder node given bytes that are not an image Pillow can decode, or run where
    Pillow is not installed (the `images` extra)."""

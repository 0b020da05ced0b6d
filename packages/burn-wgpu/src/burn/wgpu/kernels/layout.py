"""`InfoLayout`: one declaration of a kernel's `info` words, read by both sides of a launch.

Every kernel reads its shapes, strides, offsets and scalars from binding 0, an `array<u32>` of
*info* words, so one pipeline serves every shape and rank. The layout of those words is a
contract between the launch site, which packs them, and the WGSL, which reads them; written
twice (a positional list in Python, `info[4u + 2u * info[1]]` in WGSL) the two drift apart
silently. An `InfoLayout` is that contract written once: `pack(**words)` builds the list by
field name (checking every field is given, with the right length), and `wgsl()` emits the
accessor functions (`info_shape(d)`, `info_a_index(i)`, ...) the kernel source calls.

Fields come in three kinds:

- `Word(name)`: one word (a count, an offset, a dim, a scalar's bits);
- `Dims(name, extra=0)`: one word per dim of the layout's *rank* word (plus `extra`), for
  shapes and strides;
- `Strided(name, over="shape")`: an operand read through a strided view, the block
  `[contiguous flag, offset, strides...]` with one stride per dim of `over` (0 where the
  operand is broadcast); its `info_<name>_index(i)` is the element of the operand read by
  the `i`-th element (row-major) of `over`.

The rank word is the `Word` named by `rank=` ("rank" by default); it must come before every
`Dims` or `Strided` field, so each field starts at `constant + multiple * rank`.

```python
from burn.wgpu.kernels.layout import Dims, InfoLayout, Strided, Word

UNARY = InfoLayout("unary", Word("n"), Word("rank"), Dims("shape"), Strided("a"))
assert UNARY.pack(n=6, shape=(2, 3), a=(1, 0, 3, 1)) == [6, 2, 2, 3, 1, 0, 3, 1]
assert "fn info_a_index(i: u32) -> u32" in UNARY.wgsl()
```
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from keyword import iskeyword

from burn.tensor.errors import BackendError


class InfoLayoutError(BackendError):
    """Info words that do not match their layout (a missing, unknown or wrong-length field)."""


@dataclass(frozen=True)
class Word:
    """One info word."""

    name: str


@dataclass(frozen=True)
class Dims:
    """One word per dim of the layout's rank, plus `extra` (strides of a rank + 2 operand)."""

    name: str
    extra: int = 0


@dataclass(frozen=True)
class Strided:
    """A strided operand: `[contiguous flag, offset, one stride per dim of over]`."""

    name: str
    over: str = "shape"


Field = Word | Dims | Strided

_WORD, _DIMS = 0, 1


class _Required:
    """The default of every field in a packer: not given (a missing field is an error)."""

    def __repr__(self) -> str:
        return "<required>"


_MISSING = _Required()


# Emitted with every layout that has per-dim fields: `Strided` accessors walk the dims with it.
# The offset of element `i` (row-major over the shape whose words start at info[shape_at]) for
# the strides whose words start at info[stride_at].
_STRIDED = """
fn info_strided(i: u32, rank: u32, shape_at: u32, stride_at: u32) -> u32 {
    var rem = i;
    var off = 0u;
    var d = rank;
    loop {
        if (d == 0u) { break; }
        d = d - 1u;
        let size = info[shape_at + d];
        off = off + (rem % size) * info[stride_at + d];
        rem = rem / size;
    }
    return off;
}
"""


# The first line of a layout's accessors in a kernel's source.
_TITLE = "// info words ("
_FUNCTION = re.compile(r"^fn (\w+)\(", re.MULTILINE)


def prune_functions(source: str) -> str:
    """`source` without the functions that neither `main` nor a function it calls calls.

    A layout emits every accessor a kernel might want and the helper preludes hold every
    helper an op might need, but a kernel calls a few; shader compilers (lavapipe's in
    particular) spend their time on every function, used or not, so the unused ones are
    dropped once, when the kernel's source is generated (about a third of the compile time).
    Expects this package's formatting: a function starts with `fn` at the start of a line and
    ends on that line or at the next line that is `}`; comment lines right above a dropped
    function go with it.
    """
    spans = {}
    for match in _FUNCTION.finditer(source):
        name, start = match.group(1), match.start()
        line_end = source.find("\n", start)
        line_end = len(source) if line_end < 0 else line_end
        if source[start:line_end].rstrip().endswith("}"):
            end = line_end
        else:
            end = source.index("\n}", start) + 2
        spans[name] = (start, end)
    if "main" not in spans:
        return source
    calls = {name: re.compile(rf"\b{name}\(") for name in spans if name != "main"}
    body = {name: source[source.index("{", a) : b] for name, (a, b) in spans.items()}
    outside = source
    for a, b in sorted(spans.values(), reverse=True):
        outside = outside[:a] + outside[b:]
    used: set[str] = set()
    pending = [outside, body["main"]]
    while pending:
        text = pending.pop()
        for name, call in calls.items():
            if name not in used and call.search(text):
                used.add(name)
                pending.append(body[name])
    pruned = source
    for name, (a, b) in sorted(spans.items(), key=lambda item: -item[1][0]):
        if name == "main" or name in used:
            continue
        while True:  # the comment lines right above it
            above = pruned.rfind("\n", 0, a - 1) + 1
            if a == 0 or not pruned[above:a].lstrip().startswith("//"):
                break
            a = above
        b = b + 1 if pruned[b : b + 1] == "\n" else b
        pruned = pruned[:a] + pruned[b:]
    return pruned


def _at(constant: int, multiple: int, rank_word: str) -> str:
    """The WGSL expression `constant + multiple * rank` (the start of a field)."""
    if multiple == 0:
        return f"{constant}u"
    scaled = rank_word if multiple == 1 else f"{multiple}u * {rank_word}"
    return scaled if constant == 0 else f"{constant}u + {scaled}"


class InfoLayout:
    """The info words of one kernel family, declared once by name (see the module docstring).

    Args:
        name: what the words belong to, for error messages and the WGSL comment.
        *fields: the words in order.
        rank: the name of the `Word` that holds the rank (the length of every `Dims`).
    """

    # `pack(**fields) -> list[int]`: the info words, by field name. The rank word may be left
    # out (it is then the length of the first per-dim field, minus its `extra`). Launch sites
    # pack on every op, so each layout compiles a packer of its own (`_compile_packer`).
    pack: Callable[..., list[int]]

    def __init__(self, name: str, *fields: Field, rank: str = "rank"):
        self.name = name
        self.fields = fields
        self.rank = rank
        names = [f.name for f in fields]
        bad = [n for n in names if not n.isidentifier() or n.startswith("_") or iskeyword(n)]
        if bad:
            raise InfoLayoutError(f"info layout {name}: fields need plain identifiers: {bad}")
        if len(set(names)) != len(names):
            raise InfoLayoutError(f"info layout {name}: duplicate field names in {names}")
        self._names = frozenset(names)
        rank_index = next(
            (i for i, f in enumerate(fields) if isinstance(f, Word) and f.name == rank), None
        )
        self._rank_index = rank_index
        sized = [i for i, f in enumerate(fields) if not isinstance(f, Word)]
        if sized and (rank_index is None or rank_index > sized[0]):
            raise InfoLayoutError(
                f"info layout {name}: the rank word {rank!r} must come before every per-dim field"
            )
        # (name, kind, extra words beyond the rank) in order, for `pack`.
        plan = []
        # Where each field starts: (constant, multiple of the rank).
        self.starts: dict[str, tuple[int, int]] = {}
        constant = multiple = 0
        for f in fields:
            self.starts[f.name] = (constant, multiple)
            if isinstance(f, Word):
                plan.append((f.name, _WORD, 0))
                constant += 1
            else:
                extra = f.extra if isinstance(f, Dims) else 2
                plan.append((f.name, _DIMS, extra))
                constant += extra
                multiple += 1
            if isinstance(f, Strided) and Dims(f.over) not in fields[: len(plan)]:
                raise InfoLayoutError(
                    f"info layout {name}: {f.name} is read over {f.over!r}, "
                    "which is not a per-dim field (without extra words) before it"
                )
        self._plan = tuple(plan)
        self.pack = self._compile_packer()
        self._wgsl: str | None = None

    # ------------------------------------------------------------------ Python side
    def _compile_packer(self) -> Callable[..., list[int]]:
        """`pack` specialised to this layout, as `dataclasses` specialise `__init__`.

        One list display plus a length check per per-dim field takes a few hundred
        nanoseconds, where a loop over the fields took a microsecond. The source is built
        from the field names only, which the constructor checked are plain identifiers.
        """
        sized = [(n, e) for n, k, e in self._plan if k == _DIMS]
        params = [f"{n}=None" if n == self.rank and sized else f"{n}=_M" for n, _, _ in self._plan]
        required = [n for n, _, _ in self._plan if n != self.rank or not sized]
        items = [f"*{n}" if k == _DIMS else n for n, k, _ in self._plan]
        missing = " or ".join(f"{n} is _M" for n in required)
        body = [f"if _unknown or {missing}: _mismatch(locals())"]
        if sized:
            first, extra = sized[0]
            body.append(f"if {self.rank} is None: {self.rank} = len({first}) - {extra}")
            checks = " or ".join(f"len({n}) != {self.rank} + {e}" for n, e in sized)
            body.append(f"if {checks}: _bad_lengths(locals())")
        body.append(f"return [{', '.join(items)}]")
        source = "\n".join(
            [f"def pack(*, {', '.join(params)}, **_unknown):", "    try:"]
            + [f"        {line}" for line in body]
            + ["    except TypeError as e:", "        _not_a_sequence(e)"]
        )
        namespace: dict = {
            "_M": _MISSING,
            "_mismatch": self._mismatch,
            "_bad_lengths": self._bad_lengths,
            "_not_a_sequence": self._not_a_sequence,
        }
        exec(source, namespace)  # noqa: S102 - built from checked identifiers only
        packer = namespace["pack"]
        packer.__doc__ = f"The info words of {self.name}: {self.describe()}."
        return packer

    def _bad_lengths(self, words: dict) -> None:
        rank = words[self.rank]
        for name, kind, extra in self._plan:
            if kind == _DIMS and len(words[name]) != rank + extra:
                raise InfoLayoutError(
                    f"info layout {self.name}: {name} has {len(words[name])} words, expected "
                    f"{rank + extra} ({self.rank} {rank}" + (f" + {extra})" if extra else ")")
                )

    def _mismatch(self, words: dict) -> None:
        given = {n for n, v in words.items() if v is not _MISSING and n != "_unknown"}
        given |= set(words.get("_unknown", ()))
        missing = sorted(self._names - given - {self.rank})
        unknown = sorted(given - self._names)
        raise InfoLayoutError(
            f"info layout {self.name}: missing {missing}, unknown {unknown} "
            f"(fields: {[f.name for f in self.fields]})"
        )

    def _not_a_sequence(self, error: TypeError) -> None:
        raise InfoLayoutError(f"info layout {self.name}: {error}") from None

    # ------------------------------------------------------------------ WGSL side
    def wgsl(self) -> str:
        """WGSL accessors for every field, reading the `info` binding.

        `Word` x: `info_x()`; `Dims` x: `info_x(d)` and `info_x_at()` (the index of its first
        word, for helpers that walk dims); `Strided` x: `info_x_offset()`,
        `info_x_strides(d)`, `info_x_strides_at()` and `info_x_index(i)`. A layout with a rank
        word also gets `info_strided(i, rank, shape_at, stride_at)`, the offset of the `i`-th
        element of a shape under strides, both given by the index of their first word.
        """
        if self._wgsl is None:
            self._wgsl = self._emit()
        return self._wgsl

    def _emit(self) -> str:
        rank_word = "" if self._rank_index is None else f"info[{self._rank_index}u]"
        lines = [f"{_TITLE}{self.name}): {self.describe()}", ""]
        if self._rank_index is not None:
            lines.append(_STRIDED.strip())
        for f in self.fields:
            at = _at(*self.starts[f.name], rank_word)
            n = f.name
            if isinstance(f, Word):
                lines.append(f"fn info_{n}() -> u32 {{ return info[{at}]; }}")
            elif isinstance(f, Dims):
                lines.append(f"fn info_{n}_at() -> u32 {{ return {at}; }}")
                lines.append(f"fn info_{n}(d: u32) -> u32 {{ return info[{at} + d]; }}")
            else:
                constant, multiple = self.starts[f.name]
                strides = _at(constant + 2, multiple, rank_word)
                lines += [
                    f"fn info_{n}_offset() -> u32 {{ return info[{at} + 1u]; }}",
                    f"fn info_{n}_strides_at() -> u32 {{ return {strides}; }}",
                    f"fn info_{n}_strides(d: u32) -> u32 {{ return info[{strides} + d]; }}",
                    f"fn info_{n}_index(i: u32) -> u32 {{",
                    f"    if (info[{at}] == 1u) {{ return info[{at} + 1u] + i; }}",
                    f"    return info[{at} + 1u] + info_strided(i, {rank_word}, "
                    f"info_{f.over}_at(), {strides});",
                    "}",
                ]
        return "\n".join(lines) + "\n"

    def describe(self) -> str:
        """The words in order, as a reader of the kernel wants them: `n, rank, shape[rank]`."""
        parts = []
        for f in self.fields:
            if isinstance(f, Word):
                parts.append(f.name)
            elif isinstance(f, Dims):
                size = self.rank + (f" + {f.extra}" if f.extra else "")
                parts.append(f"{f.name}[{size}]")
            else:
                parts.append(f"{f.name}{{contiguous, offset, strides[{self.rank}]}}")
        return ", ".join(parts)

    def __repr__(self) -> str:
        return f"InfoLayout({self.name}: {self.describe()})"

"""Crafted `.pt` files whose pickles try to run code: every one refused, none executed.

Each payload, if it ran, would create a marker file; the tests check the error names the global
the pickle asked for and that the marker never appears.
"""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import zipfile

import pytest
from burn.pytorch import LoadArgs, PyTorchFileRecorder, UnsafePickleError, config_from_file

MAGIC = 0x1950A86A20F9469CFC6C


class Reduce:
    """An object whose pickle calls `fn(*args)` on load (the classic payload)."""

    def __init__(self, fn, *args):
        self.fn = fn
        self.args = args

    def __reduce__(self):
        return self.fn, self.args


def _global(module: str, name: str, arg: str) -> bytes:
    """Protocol-0 text: GLOBAL `module name`, one string argument, REDUCE."""
    return f"c{module}\n{name}\n(V{arg}\ntR.".encode()


def _stack_global(module: str, name: str, arg: str) -> bytes:
    """Protocol 4: names pushed as strings and memoized, then STACK_GLOBAL (no GLOBAL opcode)."""
    body = io.BytesIO()
    body.write(b"\x80\x04")
    for text in (module, name):
        raw = text.encode()
        body.write(b"\x8c" + bytes([len(raw)]) + raw + b"\x94")
    body.write(b"\x93")  # STACK_GLOBAL
    raw = arg.encode()
    body.write(b"\x8c" + bytes([len(raw)]) + raw + b"\x85R.")  # TUPLE1 REDUCE STOP
    return body.getvalue()


def _inst(module: str, name: str, arg: str) -> bytes:
    """Protocol 0 INST: builds `module.name(arg)` through the class-instance opcode."""
    return f"(V{arg}\ni{module}\n{name}\n.".encode()


def _in_state_dict(payload_obj) -> bytes:
    """A payload nested inside a normal-looking state dict, beside a real-looking entry."""
    return pickle.dumps(
        {"encoder": {"layers": [{"weight": payload_obj}]}}, protocol=2, fix_imports=False
    )


def payloads(marker: str) -> list[tuple[str, bytes, str]]:
    """(case, pickle bytes, the global the error must name)."""
    touch = f"touch {marker}"
    code = f"open({marker!r}, 'w').close()"
    rm = f"rm -f {marker}.never"
    return [
        ("os.system text", _global("os", "system", touch), "os.system"),
        (
            "posix.system reduce",
            pickle.dumps(Reduce(os.system, touch), protocol=2, fix_imports=False),
            "system",
        ),
        ("builtins.eval", _global("builtins", "eval", code), "builtins.eval"),
        ("builtins.exec", _global("builtins", "exec", code), "builtins.exec"),
        ("__builtin__.eval (py2 name)", _global("__builtin__", "eval", code), "__builtin__.eval"),
        (
            "subprocess.Popen",
            pickle.dumps(
                Reduce(subprocess.Popen, ["touch", marker]), protocol=2, fix_imports=False
            ),
            "subprocess.Popen",
        ),
        ("subprocess.call", _global("subprocess", "call", touch), "subprocess.call"),
        ("os.popen", _global("os", "popen", touch), "os.popen"),
        ("exec via STACK_GLOBAL", _stack_global("builtins", "exec", code), "builtins.exec"),
        ("os.system via STACK_GLOBAL", _stack_global("os", "system", touch), "os.system"),
        ("INST opcode", _inst("os", "system", touch), "os.system"),
        ("nested in a state dict", _in_state_dict(Reduce(eval, code)), "builtins.eval"),
        (
            "exec via copyreg",
            _global("copyreg", "_reconstructor", code),
            "copyreg._reconstructor",
        ),
        ("importlib.import_module", _global("importlib", "import_module", "os"), "importlib"),
        ("builtins.getattr", _global("builtins", "getattr", "x"), "builtins.getattr"),
        ("builtins.__import__", _global("builtins", "__import__", "os"), "__import__"),
        ("runpy._run_code", _global("runpy", "_run_code", code), "runpy._run_code"),
        ("shutil.rmtree", _global("shutil", "rmtree", rm), "shutil.rmtree"),
        ("torch.load", _global("torch", "load", "x.pt"), "torch.load"),
        (
            "torch global that is not a rebuild function",
            _global("torch.serialization", "load", "x.pt"),
            "torch.serialization.load",
        ),
        (
            "torch._utils but not a rebuild",
            _global("torch._utils", "_import_dotted_name", "os"),
            "torch._utils._import_dotted_name",
        ),
        ("numpy reconstruct", _global("numpy.core.multiarray", "_reconstruct", "x"), "numpy"),
        ("functools.partial", _global("functools", "partial", "x"), "functools.partial"),
        ("operator.attrgetter", _global("operator", "attrgetter", "system"), "operator"),
        ("pickle.loads", _global("pickle", "loads", "x"), "pickle.loads"),
        ("webbrowser.open", _global("webbrowser", "open", "http://x"), "webbrowser.open"),
    ]


def as_zip(payload: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("archive/data.pkl", payload)
        zf.writestr("archive/byteorder", "little")
        zf.writestr("archive/version", "3\n")
    return buffer.getvalue()


def as_legacy(payload: bytes) -> bytes:
    header = b"".join(
        pickle.dumps(v, protocol=2)
        for v in (MAGIC, 1001, {"protocol_version": 1001, "little_endian": True})
    )
    return header + payload + pickle.dumps([], protocol=2)


CASES = [case for case, _, _ in payloads("m")]


@pytest.mark.parametrize("container", ["zip", "legacy"])
@pytest.mark.parametrize("index", range(len(CASES)), ids=CASES)
def test_code_in_a_pickle_is_refused_and_never_runs(tmp_path, container, index):
    marker = tmp_path / "pwned"
    case, payload, named = payloads(str(marker))[index]
    raw = as_zip(payload) if container == "zip" else as_legacy(payload)
    path = tmp_path / "model.pt"
    path.write_bytes(raw)
    with pytest.raises(UnsafePickleError) as err:
        PyTorchFileRecorder().load(LoadArgs(path))
    assert named in str(err.value), case
    assert "nothing from the file was run" in str(err.value)
    with pytest.raises(UnsafePickleError):
        config_from_file(path)
    assert not marker.exists()


def test_payload_in_the_legacy_header_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    raw = _global("os", "system", f"touch {marker}") + as_legacy(pickle.dumps({}, protocol=2))
    path = tmp_path / "model.pt"
    path.write_bytes(b"\x80\x02" + raw)
    with pytest.raises(UnsafePickleError, match=r"os\.system"):
        PyTorchFileRecorder().load(path)
    assert not marker.exists()


def test_at_least_twenty_payloads():
    assert len(CASES) >= 20


def test_extension_codes_are_refused_even_when_registered(tmp_path):
    """EXT opcodes name globals through copyreg's registry and a process-wide cache."""
    import copyreg

    marker = tmp_path / "pwned"
    code = 0x7FF0
    copyreg.add_extension("os", "system", code)
    try:
        # EXT2 <code> (os.system once registered), one string argument, TUPLE1, REDUCE.
        payload = b"\x80\x02\x83" + code.to_bytes(2, "little")
        payload += f"Vtouch {marker}\n\x85R.".encode()
        path = tmp_path / "model.pt"
        path.write_bytes(as_zip(payload))
        with pytest.raises(UnsafePickleError, match="extension code 32752"):
            PyTorchFileRecorder().load(path)
    finally:
        copyreg.remove_extension("os", "system", code)
    assert not marker.exists()

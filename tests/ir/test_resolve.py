"""Op-name resolution under the allowlist."""

from __future__ import annotations

import operator
import subprocess
import sys

import pytest

from ivytrace_ir import DEFAULT_ALLOWLIST, Allowlist, OpNameError, check_name, resolve


@pytest.mark.parametrize(
    "name, reason",
    [
        ("os.system", "refused"),
        ("subprocess.run", "outside the allowed"),
        ("builtins.eval", "'eval' can read or write files, run code"),
        ("builtins.open", "refused"),
        ("builtins.print", "refused"),
        ("numpy.load", "'load' can read or write files"),
        ("torch.load", "'load' can read or write files"),
        ("torch.save", "refused"),
        ("numpy.ndarray.dump", "'dump' can read or write files"),
        ("numpy.ndarray.tofile", "refused"),
        ("numpy.test", "refused"),
        ("tensorflow.print", "refused"),
        ("tensorflow.io.write_file", "refused"),
        ("tensorflow.raw_ops.WriteFile", "outside the allowed"),
        ("numpy.lib.format.read_array", "refused"),
        ("torch.utils.data.DataLoader", "refused"),
        ("jax.numpy.load", "refused"),
        ("torch._C._nn.linear", "goes through a private name ('_C')"),
        ("torch.Tensor.__reduce_ex__", "names a private attribute"),
        ("numpy.random.Generator.__init__", "names a private attribute"),
        ("operator.attrgetter", "refused"),
        ("torch", "not a dotted Python name"),
        ("", "non-empty string"),
        ("torch..add", "not a dotted Python name"),
        ("torch.add()", "not a dotted Python name"),
        ("torch.class.x", "not a dotted Python name"),
    ],
)
def test_refused_names(name: str, reason: str) -> None:
    with pytest.raises(OpNameError) as info:
        resolve(name)
    assert reason in str(info.value)
    if name:
        assert repr(name) in str(info.value)
    assert not DEFAULT_ALLOWLIST.allows(name)


def test_non_string_name() -> None:
    with pytest.raises(OpNameError, match="non-empty string"):
        check_name(None, DEFAULT_ALLOWLIST)  # type: ignore[arg-type]


def test_refused_without_importing_anything() -> None:
    # The checks are syntactic: refusing a name inside a framework does not import it.
    code = (
        "import sys\n"
        "from ivytrace_ir import resolve, OpNameError\n"
        "for name in ('tensorflow.io.write_file', 'torch.load', 'jax.numpy.load', 'torch._C.x'):\n"
        "    try:\n"
        "        resolve(name)\n"
        "    except OpNameError:\n"
        "        pass\n"
        "print(sorted(m for m in ('torch', 'tensorflow', 'jax') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_allowed_names_resolve_to_the_callables() -> None:
    np = pytest.importorskip("numpy")
    torch = pytest.importorskip("torch")
    assert resolve("numpy.matmul") is np.matmul
    assert resolve("numpy.linalg.norm") is np.linalg.norm
    assert resolve("torch.add") is torch.add
    assert resolve("torch.Tensor.__pow__") is torch.Tensor.__pow__
    assert resolve("torch.nn.functional.linear") is torch.nn.functional.linear
    assert resolve("torch.float32") is torch.float32
    assert resolve("builtins.len") is len
    assert resolve("operator.mul") is operator.mul


def test_jax_names_resolve() -> None:
    jnp = pytest.importorskip("jax.numpy")
    assert resolve("jax.numpy.sum") is jnp.sum


@pytest.mark.parametrize(
    "name, reason",
    [("torch.no_such_op", "does not exist in this process"), ("torch.nn", "is a module")],
)
def test_names_that_pass_the_checks_but_do_not_resolve(name: str, reason: str) -> None:
    pytest.importorskip("torch")
    with pytest.raises(OpNameError, match=reason):
        resolve(name)


def test_extend_adds_namespaces_and_single_names() -> None:
    import statistics

    with pytest.raises(OpNameError):
        resolve("statistics.fmean")
    wider = DEFAULT_ALLOWLIST.extend(namespaces=("statistics",), names=("builtins.print",))
    assert resolve("statistics.fmean", wider) is statistics.fmean
    assert resolve("builtins.print", wider) is print  # a single name is the user's explicit choice
    # The default is a value: extending it changes nothing for everyone else.
    assert "statistics" not in DEFAULT_ALLOWLIST.namespaces
    with pytest.raises(OpNameError):
        resolve("builtins.print")
    # Private names stay refused whatever the allowlist says.
    with pytest.raises(OpNameError, match="private"):
        resolve("statistics._sum", wider)


def test_an_empty_allowlist_refuses_even_framework_names() -> None:
    with pytest.raises(OpNameError, match="outside"):
        resolve("torch.add", Allowlist(frozenset()))


def test_foreign_objects_re_exported_by_a_framework_module_are_refused() -> None:
    pytest.importorskip("torch")
    # torch.nn.functional imports typing's Callable; it is not a torch operation.
    with pytest.raises(
        OpNameError, match=r"resolves to collections\.abc\.Callable, outside the framework"
    ):
        resolve("torch.nn.functional.Callable")

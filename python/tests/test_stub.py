"""The .pyi stub covers the module, and everything in the module has a docstring."""

import ast
import inspect
import pathlib

import uops
from uops import _uops

STUB = pathlib.Path(_uops.__file__).with_name("_uops.pyi")


def public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def is_enum(cls):
    return hasattr(cls, "__members__")


def members(cls):
    """What a class of the module offers: its enum values, or its methods and properties."""
    if is_enum(cls):
        return set(cls.__members__)
    return public(cls)


def classes():
    return [(n, getattr(_uops, n)) for n in sorted(public(_uops))
            if inspect.isclass(getattr(_uops, n)) and not issubclass(getattr(_uops, n), Exception)]


def test_the_stub_names_every_class_function_and_member():
    stub = {}
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            stub[node.name] = node
        elif isinstance(node, ast.AnnAssign):
            stub[node.target.id] = node
    assert public(_uops) <= set(stub), sorted(public(_uops) - set(stub))
    for name, cls in classes():
        declared = {n.name if isinstance(n, ast.FunctionDef) else n.target.id
                    for n in stub[name].body if isinstance(n, (ast.FunctionDef, ast.AnnAssign))}
        assert members(cls) <= declared, (name, sorted(members(cls) - declared))


def test_every_function_class_and_member_has_a_docstring():
    for name in public(_uops):
        obj = getattr(_uops, name)
        if inspect.isclass(obj) or inspect.isroutine(obj):
            assert obj.__doc__, name
    for name, cls in classes():
        if not is_enum(cls):
            for member in members(cls):
                assert getattr(cls, member).__doc__, f"{name}.{member}"
    for fn in (uops.testing.check, uops.testing.replay, uops.testing.check_cuda,
               uops.testing.replay_cuda, uops.testing.torch_kernel):
        assert fn.__doc__


def test_limit_error_is_an_error():
    assert issubclass(uops.LimitError, uops.Error) and issubclass(uops.Error, Exception)

"""One parameter list for two public functions: a function that takes another's parameters."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import ParamSpec, TypeVar

__all__ = ["parameters_of"]

P = ParamSpec("P")
R = TypeVar("R")


def parameters_of(model: Callable[P, object]) -> Callable[[Callable[..., R]], Callable[P, R]]:
    """Declare that the decorated function takes exactly the parameters of `model`.

    Each call is bound to `model`'s signature first, so that a missing or unknown argument fails
    as it would on `model` (a TypeError naming the function), and then reaches the function with
    every default filled in: positional parameters by position, keyword-only ones as keywords.
    help(), Sphinx and type checkers show `model`'s parameters under the function's own name,
    docstring and return annotation.
    """
    signature = inspect.signature(model)

    def declare(function: Callable[..., R]) -> Callable[P, R]:
        @functools.wraps(function)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as error:
                raise TypeError(f"{function.__name__}() {error}") from None
            bound.apply_defaults()
            return function(*bound.args, **bound.kwargs)

        returns = inspect.signature(function).return_annotation
        # A function object takes any attribute; inspect.signature reads this one first.
        call.__signature__ = signature.replace(return_annotation=returns)  # type: ignore[attr-defined]
        return call

    return declare

"""A step's parameters, checked against the defaults the service reads them with.

Services read each parameter with a default, ``params.get("n_neighbors", 5)``, and dagsmith's code analysis
publishes the default's type as the parameter's type. ``Params.get`` holds a given value to that same type, so a
value of the wrong kind ("many" neighbours, "maybe" for a switch) stops the step with one clear line instead of a
traceback from deep inside a cast or a library, whichever service reads it.
"""

from __future__ import annotations

from typing import Any

from dagsmith_kit.errors import ServiceError

_TRUE, _FALSE = {"true", "yes", "1"}, {"false", "no", "0"}


def _number(value: Any) -> bool:
    """A number, or text a service's ``int()``/``float()`` reads as one."""
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return False
        return True
    return isinstance(value, int | float) and not isinstance(value, bool)


class Params(dict):
    """The parameters object: a dict whose ``get(name, default)`` checks a given value against ``default``'s type.

    A numeric default takes a number (or a numeric string, which the service casts); a true/false default takes a
    boolean (or "true"/"false", "yes"/"no", 0/1, returned as a bool); a list default takes a list (or one number,
    which some services read as a list of one, e.g. one hidden layer). A default of None or text takes anything:
    those parameters name choices a service checks itself.
    """

    def get(self, name: str, default: Any = None) -> Any:
        if name not in self:
            return default
        value = self[name]
        if value is None or default is None or isinstance(default, str):
            return value
        if isinstance(default, bool):
            return _switch(name, value)
        if isinstance(default, int | float) and not _number(value):
            raise ServiceError(f"parameter '{name}' must be a number, got {value!r}")
        if isinstance(default, list | tuple) and not (isinstance(value, list | tuple) or _number(value)):
            raise ServiceError(f"parameter '{name}' must be a list, got {value!r}")
        return value


def _switch(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    raise ServiceError(f"parameter '{name}' must be true or false, got {value!r}")


def declared(params: dict[str, Any], **defaults: Any) -> dict[str, Any]:
    """The parameters a service declares, read with their defaults: ``Estimator(**declared(params, n_estimators=200,
    max_depth=None))``. Each is read as ``params.get(name, default)`` reads it (checked against the default's type),
    and a numeric one is returned as the default's type (``"300"`` or ``300.0`` as 300 where the default is 200).
    dagsmith's code analysis lists each keyword as a parameter with that default, as it does for ``params.get``.
    """
    given = Params(params)
    values = {}
    for name, default in defaults.items():
        value = given.get(name, default)
        if isinstance(default, int | float) and not isinstance(default, bool) and value is not None:
            value = type(default)(float(value))
        values[name] = value
    return values


def at_least(name: str, value: float, least: float) -> float:
    """``value`` of the parameter ``name``, refused in one line when it is below ``least`` (a count of bins, a
    marker size: what a library would otherwise reject with a traceback, or draw as nothing)."""
    if value < least:
        raise ServiceError(f"parameter '{name}' must be at least {least:g}, got {value:g}")
    return value


def one_of(name: str, value: Any, choices: tuple[str, ...]) -> Any:
    """``value`` of the parameter ``name``, refused in one line unless it is one of ``choices``."""
    if value not in choices:
        raise ServiceError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value

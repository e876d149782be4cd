"""Reading typed fields out of a config dict, with one-line errors that name the missing or bad field
(in the reader's language: a pasted config's error is shown on the planner page)."""

from __future__ import annotations

from typing import Any

from core.i18n import _
from core.plan.errors import ConfigError

_MISSING = object()


class Fields:
    """A config dict with checked getters; `family` goes into every error message."""

    def __init__(self, data: dict, family: str):
        if not isinstance(data, dict):
            raise ConfigError(
                _("{family}: expected a JSON object, got {kind}").format(
                    family=family, kind=type(data).__name__
                )
            )
        self.data = data
        self.family = family

    def has(self, name: str) -> bool:
        return self.data.get(name) is not None

    def raw(self, name: str, default: Any = _MISSING) -> Any:
        value = self.data.get(name)
        if value is None:
            if default is _MISSING:
                raise ConfigError(
                    _("{family} config: missing field '{name}'").format(family=self.family, name=name)
                )
            return default
        return value

    def int(self, name: str, default: Any = _MISSING, minimum: int = 1) -> int:
        value = self.raw(name, default)
        if value is None:
            return value
        if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
            raise ConfigError(
                _("{family} config: field '{name}' must be a whole number, got {value!r}").format(
                    family=self.family, name=name, value=value
                )[:200]
            )
        if value < minimum:
            raise ConfigError(
                _("{family} config: field '{name}' must be at least {minimum}, got {value}").format(
                    family=self.family, name=name, minimum=minimum, value=value
                )
            )
        if value > 2**40:
            raise ConfigError(
                _("{family} config: field '{name}' is implausibly large ({value})").format(
                    family=self.family, name=name, value=value
                )
            )
        return int(value)

    def flag(self, name: str, default: bool = False) -> bool:
        value = self.raw(name, default)
        if not isinstance(value, bool):
            raise ConfigError(
                _("{family} config: field '{name}' must be true or false, got {value!r}").format(
                    family=self.family, name=name, value=value
                )[:200]
            )
        return value

    def int_list(self, name: str, default: Any = _MISSING) -> list[int] | None:
        value = self.raw(name, default)
        if value is None:
            return None
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise ConfigError(
                _("{family} config: field '{name}' must be a list of whole numbers").format(
                    family=self.family, name=name
                )
            )
        return value

    def str_list(self, name: str, default: Any = _MISSING) -> list[str] | None:
        value = self.raw(name, default)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(
                _("{family} config: field '{name}' must be a list of strings").format(
                    family=self.family, name=name
                )
            )
        return value

    def sub(self, name: str) -> Fields:
        value = self.raw(name)
        if not isinstance(value, dict):
            raise ConfigError(
                _("{family} config: field '{name}' must be an object").format(family=self.family, name=name)
            )
        return Fields(value, self.family)

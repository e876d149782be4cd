"""The one error the planner raises for a config it cannot read: a one-line message a reader can act on."""


class ConfigError(ValueError):
    """A config.json the planner cannot use; the message names the field or the problem in one line."""

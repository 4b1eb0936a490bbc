"""One exception root for everything recon reports to a user.

Every subclass carries an ``exit_code`` so the command line can print the message
(one or two lines, no traceback) and exit accordingly; library callers simply catch
:class:`ReconError`.
"""
from __future__ import annotations


class ReconError(Exception):
    """Root of every error recon raises on purpose."""

    exit_code: int = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message if hint is None else f"{message}\n  fix: {hint}")

    def render(self) -> str:
        """The message as the CLI prints it (message, then the fix on its own line)."""
        return str(self)


class UsageError(ReconError):
    """The command was called wrongly (bad option combination, missing path...)."""

    exit_code = 2


class PluginError(ReconError):
    """An ``@oracle`` declaration or a plugin module is invalid."""

    exit_code = 3


class DuplicateOracleError(PluginError):
    """Two sources register the same oracle name."""


class UnknownOracleError(ReconError):
    """A name was asked for that no loaded source registers."""

    exit_code = 2


class SpecError(ReconError):
    """A sweep spec (``scenarios/<name>.toml``) or a ladder file is invalid."""

    exit_code = 3


class OracleRunError(ReconError):
    """The oracle raised or returned something that is not a valid output."""

    exit_code = 4


class CanonicalJSONError(ReconError):
    """A value cannot be written as canonical JSON (NaN, Infinity, a non-JSON type)."""


class BuildError(ReconError):
    """A task could not be built; nothing was left behind."""

    exit_code = 4


class TaskError(ReconError):
    """A built task directory is missing something or was altered."""

    exit_code = 3


class RuntimeUnavailable(ReconError):
    """The requested sandbox runtime cannot run here (no engine, no bwrap...)."""

    exit_code = 5


class ValidationFailed(ReconError):
    """``recon validate`` found the task unsound."""

    exit_code = 1

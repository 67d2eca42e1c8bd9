"""graft's errors, as the torch.fx calls they stand in for raise them.

Every error graft raises is a GraftError (a RuntimeError). Where torch.fx raises AssertionError,
KeyError or ValueError for the same mistake, the drop-in raises a GraftError that is also an
instance of that class, so `except AssertionError:` written for torch.fx still catches it, with
graft's message.
"""
import contextlib

from ._native import GraftError

__all__ = ["GraftAssertionError", "GraftError", "GraftKeyError", "GraftValueError", "raised_as"]


class GraftAssertionError(GraftError, AssertionError):
    """Where torch.fx asserts (a pattern with dead code, a placeholder count mismatch, a partition
    that cannot be fused)."""


class GraftValueError(GraftError, ValueError):
    """Where torch.fx raises ValueError (an empty pattern)."""


class GraftKeyError(GraftError, KeyError):
    """Where torch.fx raises KeyError."""

    def __str__(self):  # KeyError quotes its message; graft's is a sentence
        return str(self.args[0]) if self.args else ""


@contextlib.contextmanager
def raised_as(kind, only=None):
    """Re-raises a GraftError (or a KeyError or ValueError from the conversion) inside the block
    as `kind`, one of the classes above; `only`: just the errors whose message starts so."""
    try:
        yield
    except kind:
        raise
    except (GraftError, KeyError, ValueError) as e:
        message = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
        if only is not None and not message.startswith(only):
            raise
        raise kind(message) from e

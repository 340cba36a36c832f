"""Errors a user can act on. Their message names the file and says what to do."""


class UserError(Exception):
    """A failure with a message meant for the user (no traceback needed)."""


class ModelError(UserError):
    """A model folder or checkpoint is missing, incomplete or not a Hayai checkpoint."""


class ImageError(UserError):
    """An image could not be read."""


class OutOfMemory(UserError):
    """Even a single crop does not fit in memory on the device left to use."""


class Cancelled(Exception):
    """Raised when the user cancelled long work (a cancel hook returned True)."""

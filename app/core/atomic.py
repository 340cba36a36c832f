"""Moved to `app.atomic` (the model store, below app.core, writes through it too)."""
from app.atomic import atomic_write_text

__all__ = ["atomic_write_text"]

"""Hayai Desktop: manga OCR with the Hayai model family."""

__version__ = "0.1.0"

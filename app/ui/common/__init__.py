"""Shared by every room: widgets, dialogs, icons, error text, the log bridge, the thread registry, screen fitting."""

"""The window that composes the rooms: menus and actions, start-up, the session (open, save, autosave), preferences, about, the xcb check, the demo."""

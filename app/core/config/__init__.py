"""The user's configuration: `settings` the app's settings (a typed dataclass stored as JSON in
the user's config folder, versioned, kept read-only when a newer build wrote it; where export
dialogs start), `api_keys` the translation servers' API keys (environment, keyring, or a file
only the user can read), each bound to its server and never sent in clear to another machine.
No Qt: the window reads and writes both through app.ui."""

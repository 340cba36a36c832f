"""The project on disk: where a source's project file goes (`paths`: beside the pages, or in
the data dir when that folder is not writable or is the app's own), the file's format (`codec`:
a project to JSON and back, damaged files refused), saving, loading and reopening it against
the pages on disk now, with autosaves for crash recovery (`files`), the edit journal that keeps
every edit made since the last autosave (`journal`), one writer per project (`lock`), and the
versioning rules of every file the app writes: projects, exports, series files, settings
(`versioning`)."""

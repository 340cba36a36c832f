"""The core: the document and everything done with it, headless (no Qt), shared by the window,
the subcommands and the batch. It composes the stages (app.detect, app.ocr, app.translate,
app.render), which know nothing of it, and turns their plain results into the document. In
rooms, each a package (the `core-rooms` contract in pyproject.toml, docs/architecture.md):
`document` the values and their edits; `sources` where pages come from; `project` the project
on disk; `reading` the page pipeline; `exports` what a project is exported as; `config` the
user's settings and API keys; `translation` translating a volume; `batch` the library batch."""

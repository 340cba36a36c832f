"""The document: what a project holds and how it changes. `types` holds the values (`Project`:
a source and its pages; `Page`: its blocks in reading order; `Block`: a box, its text, its
translation, its lettering) — pages and blocks are frozen, the project is their container;
`edits` the changes, plain functions from a value to a new one that the window's undo commands
and the subcommands share; `find_replace` find and replace over the volume's text; `boxes` boxes
compared (IoU, one-to-one matching). Plain data: no Qt, no files, no other room of app.core."""

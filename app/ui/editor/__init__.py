"""Editing the document: the canvas and its items, the block panel, the page list, the document model, undo commands and keys, image jobs."""

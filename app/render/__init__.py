"""The last stage of the pipeline, Qt-free: text masks, inpainting, typesetting, page writers.

    strokes.py   MaskStroke: the user's brush edits of a text mask (plain data)
    style.py     TextStyle (a project's default) and StyleOverride (a block's changes)
    masks.py     the text mask of a block: from its polygon or from the crop, dilated, edited
    inpaint.py   engines behind one interface (OpenCV; LaMa in lama.py), the page cleaner
    lama.py      LaMa from an ONNX file with onnxruntime: padding, tiling, CUDA when offered
    fontfind.py  which font file a style names (the app's faces, installed fonts, a path)
    layout.py    font size search, line breaking, hyphenation, balanced lines, vertical columns
    draw.py      the one renderer (Pillow): layouts to RGBA patches, compositing
    typeset.py   a block's usable shape and its text layer
    page.py      PageRenderer: one page's masks, clean patches and text layers, cached
    writers.py   PNG / JPEG / WebP, CBZ, PDF and layered PSD writers

Imports none of app.detect, app.ocr, app.translate or app.core; importing the package is cheap.
"""

"""The model store: every kind of model the app uses (OCR, detector, translation, inpainting) is
listed, found, downloaded, verified and trusted here. It knows no model family: app.ocr,
app.detect, app.translate and app.render ask it for a path and load the files themselves.

    manifest.py  MODELS / ALIASES: Hub repo, pinned revision, files with sha256 and size, kind
    store.py     resolution (explicit path > app folder > HF cache), download, verify, trust,
                 import, remove
    places.py    where models live: the app's model folder, the HF cache, the endpoint, offline mode
    integrity.py sha256 of files (remembered per path/size/mtime) and the hashes the user trusted
    fetch.py     one file from the Hub: byte progress, cancel, HTTP Range resume, sha256
    device.py    the device policy (auto = CUDA, then MPS, then CPU) and out-of-memory detection

No Qt. Importing the package is cheap (torch loads only with device.py).
"""

"""PyInstaller entry point of the `hayai-desktop` bundle: the same `app.cli.entry` as `python -m app`."""
import multiprocessing

if __name__ == "__main__":
    multiprocessing.freeze_support()  # torch/ultralytics worker processes re-enter here when frozen
    from app.cli import entry

    entry()

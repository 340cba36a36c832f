"""The library batch: every volume of a library read with the page pipeline, resumable, in this
process or on a Ray cluster (`hayai-desktop batch`, app/commands/batch.py).

library.py   finding volumes (folders of pages, CBZ/ZIP archives) and naming their exports
chunks.py    the unit of work: a chunk of pages of one volume, as bytes for remote workers
journal.py   batch.jsonl, finished exports, the chunks read of unfinished volumes (resume)
runner.py    the driver: plan, feed an engine, assemble and write volumes; the in-process engine
worker.py    the model-holding worker (a Ray actor under ray_engine.py)
ray_engine.py  the Ray engine (imports ray, lazily: only `--ray` needs it)
"""

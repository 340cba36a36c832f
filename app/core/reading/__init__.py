"""Reading pages: the stages composed. `pipeline` runs detect -> order -> crop -> recognize on
a source's pages, chunk by chunk, with cancel, and numbers the stages' plain results into the
document's blocks (one code path for the window's worker and the `ocr` command); `spec` says
what a pipeline loads as small picklable data (`ocr`, `eval` and the library batch's workers
build the same pipeline from it); `evaluation` scores the pipeline on pages with known truth
(block recall and precision, CER: `hayai-desktop eval`)."""

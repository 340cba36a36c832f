"""The manifest of published models: Hub repo, pinned revision, and every file's sha256 and size
and what kind of model each is. `MODELS` maps a name to a frozen `ModelEntry`; `ALIASES` maps
short names. Used by app.models.store."""
from __future__ import annotations

from dataclasses import dataclass

# What a model is for; the model manager and `models list` group by it, in this order.
KINDS = ("ocr", "detector", "translation", "inpainting")
KIND_LABELS = {"ocr": "OCR", "detector": "Text detectors", "translation": "Translation",
               "inpainting": "Inpainting (text removal)"}
FILE_KINDS = ("detector", "inpainting")  # used as one file, not a folder


@dataclass(frozen=True)
class ModelFile:
    """One file of a model: `name` in the repo, `sha256` (hex, None = not pinned), `size` in bytes."""

    name: str
    sha256: str | None
    size: int | None = None


@dataclass(frozen=True)
class ModelEntry:
    """A published model: Hub `repo_id` at a pinned `revision` (commit), its `files`,
    `kind` (one of KINDS: what it is for, how the model manager groups it), a `description`, a
    `license` tag (None when not stated) and `also_revisions`: other commits with the same files.
    A model of a FILE_KINDS kind with one file resolves to that file, any other to its folder."""

    name: str
    repo_id: str
    revision: str
    files: tuple[ModelFile, ...]
    kind: str
    description: str
    license: str | None = None
    also_revisions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        for f in self.files:
            if f.name.endswith(".py") or "/" in f.name or "\\" in f.name or f.name.startswith("."):
                raise ValueError(f"{self.name}: {f.name!r} is not a data file this store may fetch")

    @property
    def single_file(self) -> bool:
        """True when the model is used as one file (a detector's `.pt`, an inpainting `.onnx`)."""
        return self.kind in FILE_KINDS and len(self.files) == 1

    @property
    def pinned(self) -> bool:
        """True when every file has a sha256 in the manifest."""
        return all(f.sha256 for f in self.files)

    @property
    def size(self) -> int | None:
        """Total bytes, or None when a file's size is unknown."""
        sizes = [f.size for f in self.files]
        return None if None in sizes else sum(sizes)  # type: ignore[arg-type]


_TOKENIZER = ModelFile("tokenizer.json", "f8a0a909c628a684fe463094614e236a8b1d3609e7770f77e7beafaf1056bf13",
                       1_247_253)
_TOKENIZER_CONFIG = ModelFile("tokenizer_config.json",
                              "6fb6c69afaedf1275872d3e62e276fd4467bd00da7a84cbbb5566a2cd28f58f6", 244)

_ENTRIES = (
    ModelEntry(
        name="hayai-ocr-v2.5-nova",
        repo_id="JustANormalTinkerer/hayai-ocr-v2.5-nova",
        revision="e34d7755ed11e626c5ba39544af5d66f20ee57cc",
        files=(
            ModelFile("config.json", "880c99360c77733032fe06e94de8123dca21610cab782c6df43e4e26c9d37c41"),
            ModelFile("model.safetensors", "ac63cd177c5b68bd91e18dd4408e0400461c7cf19f484b0da1643e232d1ffc3a"),
            _TOKENIZER,  # same sha256 as v2's, so the same size
            _TOKENIZER_CONFIG,
        ),
        kind="ocr",
        description="Hayai OCR v2.5 Nova (DSC projector), the default OCR model",
    ),
    ModelEntry(
        name="hayai-ocr-v2",
        repo_id="JustANormalTinkerer/hayai-ocr-v2",
        revision="3608bb2075b9b39cb9f63e57251bca665de248cd",
        also_revisions=("4a4ce477c9a8841f208b94e1d9ed5c0938965e05",),
        files=(
            ModelFile("config.json", "581b762f1dfd55d0108f3f84e3f157bc762524af37fb0c19a7172a18b75582e2", 342),
            ModelFile("model.safetensors", "4c645b221db8428cda04991be234c18133bb8861142a3d87cba04c5099b02328",
                      622_502_784),
            _TOKENIZER,
            _TOKENIZER_CONFIG,
        ),
        kind="ocr",
        description="Hayai OCR v2 / v2.1 (MLP projector)",
    ),
    ModelEntry(
        name="comic-speech-bubble-detector",
        repo_id="ogkalu/comic-speech-bubble-detector-yolov8m",
        revision="main",
        files=(ModelFile("comic-speech-bubble-detector.pt", None),),
        kind="detector",
        description="YOLOv8m speech bubbles, trained at 1024",
        license="apache-2.0",
    ),
    ModelEntry(
        name="comic-text-segmenter",
        repo_id="ogkalu/comic-text-segmenter-yolov8m",
        revision="main",
        files=(ModelFile("comic-text-segmenter.pt", None),),
        kind="detector",
        description="YOLOv8m text regions (segmentation), trained at 1024",
        license="apache-2.0",
    ),
    ModelEntry(
        name="manga-text-detector",
        repo_id="ogkalu/manga-text-detector-yolov8s",
        revision="main",
        files=(ModelFile("manga-text-detector.pt", None),),
        kind="detector",
        description="YOLOv8s text blocks, trained at 640",
        license=None,
    ),
    ModelEntry(
        name="yolov8m-seg-speech-bubble",
        repo_id="kitsumed/yolov8m_seg-speech-bubble",
        revision="main",
        files=(ModelFile("model.pt", None),),
        kind="detector",
        description="YOLOv8m speech bubbles (segmentation), trained at 640",
        license="GPL-3.0",
    ),
    # LaMa fine-tuned on manga (dreMaz/AnimeMangaInpainting's big-LaMa), exported to ONNX with
    # dynamic height and width. The sha256 is the one comic-translate pins for this file; the
    # Hub commit and the file size could not be checked from here, so the revision stays "main"
    # and the hash does the pinning. The repository states no licence.
    ModelEntry(
        name="lama-manga",
        repo_id="ogkalu/lama-manga-onnx-dynamic",
        revision="main",
        files=(ModelFile("lama-manga-dynamic.onnx",
                         "de31ffa5ba26916b8ea35319f6c12151ff9654d4261bccf0583a69bb095315f9"),),
        kind="inpainting",
        description="LaMa (big-LaMa fine-tuned on manga), ONNX: text removal on art and screentone",
        license=None,
    ),
)


def _opus_mt(pair: str, language: str, revision: str, license: str) -> ModelEntry:
    """Helsinki-NLP's MarianMT model for `pair` (e.g. "ja-en"), at a revision that holds the
    `model.safetensors` the Hub's conversion bot added (their main branches have only the
    pickle `pytorch_model.bin`, which is never fetched). The revisions come from the Hub's file
    listings (read 2026-11-30); the files' sha256 could not be read from this project's machines,
    so they download only with --trust-unpinned (trust on first use: the hashes seen are recorded
    and checked from then on)."""
    return ModelEntry(
        name=f"opus-mt-{pair}",
        repo_id=f"Helsinki-NLP/opus-mt-{pair}",
        revision=revision,
        files=tuple(ModelFile(n, None) for n in ("config.json", "generation_config.json", "source.spm",
                                                 "target.spm", "vocab.json", "tokenizer_config.json",
                                                 "model.safetensors")),
        kind="translation",
        description=f"MarianMT {language} to English, offline translation (~300 MB)",
        license=license,
    )


_ENTRIES += (
    # the safetensors conversion of ja-en lives on the Hub's pull-request ref (commit 6293fec, unmerged)
    _opus_mt("ja-en", "Japanese", "refs/pr/3", "apache-2.0"),
    _opus_mt("ko-en", "Korean", "242c8bc3d012792ae91e50ba1b6b3c7ffb932736", "apache-2.0"),
    _opus_mt("zh-en", "Chinese", "badebd2bdd4cdfde141a969df82a0f2c4e3b1dfe", "cc-by-4.0"),
)

MODELS: dict[str, ModelEntry] = {e.name: e for e in _ENTRIES}
# The model of each kind that the app and the commands use when the user has chosen none.
DEFAULTS: dict[str, str] = {"ocr": "hayai-ocr-v2.5-nova", "detector": "comic-speech-bubble-detector"}
ALIASES: dict[str, str] = {
    "nova": "hayai-ocr-v2.5-nova",
    "v2.5": "hayai-ocr-v2.5-nova",
    "default": "hayai-ocr-v2.5-nova",
    "v2": "hayai-ocr-v2",
    "v2.1": "hayai-ocr-v2",
    "bubbles": "comic-speech-bubble-detector",
    "text-seg": "comic-text-segmenter",
    "manga-text": "manga-text-detector",
    "bubbles-seg": "yolov8m-seg-speech-bubble",
    "lama": "lama-manga",
    "ja-en": "opus-mt-ja-en",
    "ko-en": "opus-mt-ko-en",
    "zh-en": "opus-mt-zh-en",
}

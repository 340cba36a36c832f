"""Where pages come from: a folder of images, a CBZ/ZIP archive, a single image, or a mokuro
volume. `source` lists a source's pages in natural order without decoding them and loads one
on demand; `images` decodes and measures a page image (EXIF applied, bad files named);
`mokuro_volume` finds and reads a .mokuro file, the folder of its page images, and the project
it opens as when no saved project exists. Imports only the document."""

"""What a project is exported as, and the exports read back. `json_txt`: the JSON export (the
documented, versioned schema in export_schema.json) and the TXT export, with the TXT re-import
of edited text or translations; `json_read`: a JSON export read back into a project (the input
of `translate` and `render`); `mokuro` and `mokuro_lines`: a volume for mokuro's readers, its
lines laid over the glyphs; `reader_page`: the self-contained HTML reader page;
`script_table`: the script as CSV / TSV and its import; `translated_pages`: the cleaned and
lettered pages (PNG, JPEG, WebP, PSD, CBZ, PDF), the same blocks and renderer the window's
views use."""

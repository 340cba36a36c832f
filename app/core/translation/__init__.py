"""Translating a volume, around the translators of app.translate. `run` sends a project's pages
(or selected blocks) to a translator page by page, with context, glossary and resume, one code
path for the window's worker and the `translate` / `ocr --translate` commands;
`translation_memory` the translations the user approved, reused exactly or offered as similar;
`series` the series file the volumes of one series share (glossary, story memory, translation
memory, style); `glossary_proposals` names and terms worth a glossary entry, offered, never
added on their own; `consistency` the check of a translated volume (`hayai-desktop check`, the
Consistency panel); `evaluation` translation quality against reference translations
(`hayai-desktop eval-translation`). No Qt."""

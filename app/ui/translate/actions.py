"""The Translate menu's actions and shortcuts, and where the key for a server comes from (the
Translation settings dialog's hint), for app.ui.translate.control."""
from __future__ import annotations

from types import SimpleNamespace

from PySide6.QtGui import QAction, QKeySequence

from app.ui.common import icons

SHORTCUTS = [
    ("translate_page", "Translate this page", "Ctrl+T"),
    ("translate_all", "Translate all pages (the ones not translated yet)", "Ctrl+Shift+T"),
    ("translate_selected", "Translate the selected blocks (on the page, or rows of the Script view)", "Ctrl+Shift+B"),
]


def build_actions(ctl) -> SimpleNamespace:
    """The TranslationController `ctl`'s actions; `menu` (the Translate menu's, in order, None a separator) and `toolbar`
    (Translate page) say where the window puts them."""
    a = SimpleNamespace()
    for name, label, keys in SHORTCUTS:
        act = QAction(label, ctl._parent_widget())
        act.setShortcut(QKeySequence(keys))
        setattr(a, name, act)
    a.translate_page.setText("Translate page")
    a.translate_page.setToolTip("Machine-translate this page (Ctrl+T)")
    a.translate_page.setIcon(icons.icon("translate", ctl._parent_widget().palette()))  # repainted on a theme switch
    a.translate_page.triggered.connect(ctl.translate_current)
    a.translate_all.triggered.connect(ctl.translate_all)
    a.translate_selected.setText("Translate the selected blocks")
    a.translate_selected.triggered.connect(lambda: ctl.translate_blocks())
    a.retranslate_selected = QAction("Translate the selected blocks, replacing my own translations",
                                     ctl._parent_widget())
    a.retranslate_selected.triggered.connect(lambda: ctl.translate_blocks(replace_edited=True))
    a.translate_pages = QAction("Translate pages…", ctl._parent_widget())
    a.translate_pages.setToolTip("Machine-translate a range of pages (e.g. 3-7)")
    a.translate_pages.triggered.connect(lambda: ctl.translate_page_range())
    a.retranslate_page = QAction("Translate page again, replacing my own translations", ctl._parent_widget())
    a.retranslate_page.triggered.connect(lambda: ctl.translate_current(replace_edited=True))
    a.cancel = QAction("Cancel translation", ctl._parent_widget())
    a.cancel.setEnabled(False)
    a.cancel.triggered.connect(ctl.cancel)
    a.settings = QAction("Translation settings…", ctl._parent_widget())
    a.settings.triggered.connect(ctl.open_settings)
    a.glossary = QAction("Glossary…", ctl._parent_widget())
    a.glossary.triggered.connect(ctl.open_glossary)
    a.add_term = QAction("Add the selected block to the glossary…", ctl._parent_widget())
    a.add_term.triggered.connect(lambda: ctl.open_glossary(from_block=True))
    a.menu = [a.translate_page, a.translate_selected, a.translate_pages, a.translate_all, None,
              a.retranslate_page, a.retranslate_selected, a.cancel, None,
              a.glossary, a.add_term, a.settings]
    a.toolbar = a.translate_page
    return a


def key_state(provider: str, base_url: str) -> str:
    """Where the key for this server comes from now (never the key itself)."""
    from app.core.config import api_keys

    found = api_keys.find_key(provider, base_url)
    if found.withheld and not found.key:
        hosts = ", ".join(api_keys.OWN_HOSTS.get(found.withheld, ())) or "its provider"
        return f"${found.withheld} is set but goes only to {hosts}: type a key for this server, or tick below."
    keyring_note = ("stored in the system keyring" if api_keys.keyring_available() else
                    f"no system keyring here: a key typed above is saved in {api_keys.key_file()}, readable only by you")
    if found.where.startswith("env:"):
        return f"Using the key in ${found.where[4:]} (the field above is ignored while it is set)."
    if found.where == "keyring":
        return "A key is stored in the system keyring; type a new one to replace it."
    if found.where == "file":
        return f"A key is stored in {api_keys.key_file()} (readable only by you); type a new one to replace it."
    var = api_keys.env_var_for(provider, base_url)
    env = f" or set ${var}" if var else ""
    return f"No key yet: type one{env} ({keyring_note}). Local servers need none."

"""Translation in the window: the control, its worker, the settings and glossary dialogs."""

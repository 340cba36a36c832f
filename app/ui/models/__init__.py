"""The model manager dialog, its guide and the model status shown in the window."""

"""Developer tools: synthetic data, training scripts for the demo models. Not shipped in the app."""

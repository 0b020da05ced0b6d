"""HuggingFace datasets imported into SQLite for burn.data."""

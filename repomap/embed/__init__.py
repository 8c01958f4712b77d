"""The embedding model: text in, unit vectors out (see model.py)."""

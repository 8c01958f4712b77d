"""The embedding model: text in, unit vectors out (see model.py)."""

from pathlib import Path

# The model's own tokenizer (vendored beside this file; see NOTICE): its vocabulary is also the
# index's English dictionary (index/chunks.py `compound_words`), read without the model.
TOKENIZER_FILE = Path(__file__).with_name("tokenizer.json")

"""Answering queries from the index: the query language, text and literal search, symbol
lookup, docs search, snippets and the search log."""

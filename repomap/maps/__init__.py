"""The repo map: the ranking chosen per query (focus, mentions) and its token-budgeted rendering."""

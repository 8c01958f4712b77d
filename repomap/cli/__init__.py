"""The command line: click commands and their rich rendering."""

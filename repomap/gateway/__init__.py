"""What an agent reads: outline, a symbol's source, a file, the source tree, files by name."""

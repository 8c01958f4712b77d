; Comments, doc comments and string literals of Rust source, for extractors/rust.py.
; Doc comments are told apart from plain ones by their marker (`///`, `//!`, `/**`, `/*!`) in
; rust.py. Token trees (macro arguments and macro_rules bodies) hold these nodes too.

[(line_comment) (block_comment)] @comment
[(string_literal) (raw_string_literal)] @string

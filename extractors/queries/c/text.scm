; Comments, doc comments (kernel-doc `/** ... */` included) and string literals for C.

(comment) @comment

; Adjacent literals the compiler joins ("abc" "def") are one element; cpp.py skips
; the string_literal parts of a concatenated_string.
(concatenated_string) @string.concatenated
(string_literal) @string

; `#define` bodies and `#error`/`#pragma` arguments are opaque text to tree-sitter;
; cpp.py scans them for the comments, strings and identifiers inside.
(preproc_arg) @preproc.argument

; Error recovery can split a string literal into `"` and words: cpp.py scans ERROR text
; for literals tree-sitter did not read.
(ERROR) @error

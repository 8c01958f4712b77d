; Definitions and references for C (`.c`, and `.h` in a C project: see repomap/languages.py).
; The same reader as C++ (cpp.py) takes the captures: each @definition capture is the whole
; declaration, and cpp.py reads its name, signature and extent from the node.

(struct_specifier body: (field_declaration_list)) @definition.struct
(union_specifier body: (field_declaration_list)) @definition.union
(enum_specifier body: (enumerator_list)) @definition.enum
(enumerator) @definition.enumerator
; A record's data members (`int len;`, `void (*cb)(int);`), inside `#if` blocks too.
(field_declaration) @definition.field

(function_definition) @definition.function

; Every declaration: cpp.py keeps prototypes (`void f(int);`) and file-scope variables, and
; drops locals and forward declarations.
(declaration) @definition.declaration

(preproc_def) @definition.macro
(preproc_function_def) @definition.macro

(type_definition) @definition.type

; References, the tags kinds: call targets, types, members, the macros `#ifdef` tests, and
; functions named in initialisers (`.open = foo_open`: the kernel's way to call them).
(call_expression function: (identifier) @reference.call)
(initializer_pair value: (identifier) @reference.call)
(type_identifier) @reference.type
(field_expression field: (field_identifier) @reference.field)
(preproc_ifdef name: (identifier) @reference.macro)
(preproc_defined (identifier) @reference.macro)

; `SYSCALL_DEFINE1(foo, int, x) { ... }`: a function a macro defines, which tree-sitter-c reads
; as a call statement and a block at file scope; cpp.py pairs them into a function.
(translation_unit (compound_statement) @local.block)
(preproc_if (compound_statement) @local.block)
(preproc_ifdef (compound_statement) @local.block)
(preproc_else (compound_statement) @local.block)
(preproc_elif (compound_statement) @local.block)

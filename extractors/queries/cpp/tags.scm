; Definitions and references for C++ (and C headers read as C++).
; Each @definition capture is the whole declaration: cpp.py reads its name, its nesting
; (for qualified names), its signature and its template header from the node.

(namespace_definition) @definition.namespace

(class_specifier body: (field_declaration_list)) @definition.class
(struct_specifier body: (field_declaration_list)) @definition.struct
(union_specifier body: (field_declaration_list)) @definition.union
(enum_specifier body: (enumerator_list)) @definition.enum
(enumerator) @definition.enumerator
; A record's data members (`int len;`, `void (*cb)(int);`), inside `#if` blocks too; a member function's
; declaration is a method (below), which cpp.py tells apart.
(field_declaration) @definition.field

(function_definition) @definition.function

; Every declaration: cpp.py keeps function prototypes (`void f(int);`, `Foo *create();`) and
; namespace-scope variables, and drops locals, friends and forward declarations.
(declaration) @definition.declaration

; In-class member function declarations (`int add(int a) const;`, `Foo &get();`).
(field_declaration declarator: (function_declarator)) @definition.method
(field_declaration declarator: (pointer_declarator declarator: (function_declarator))) @definition.method
(field_declaration declarator: (reference_declarator (function_declarator))) @definition.method
(field_declaration declarator: (operator_cast)) @definition.method

; Declarations a template or a friend wraps.
(template_declaration) @local.template
(friend_declaration (declaration) @local.friend)

(preproc_def) @definition.macro
(preproc_function_def) @definition.macro

(type_definition) @definition.type
(alias_declaration) @definition.type

; `TEST_CASE("adds", "[math]") { ... }` (Catch2, doctest): a function a macro defines, which
; tree-sitter-cpp reads as a call statement and a block; cpp.py pairs them into a function, as
; for C's `SYSCALL_DEFINE1(..) { ... }`.
(translation_unit (compound_statement) @local.block)
(declaration_list (compound_statement) @local.block)
(preproc_if (compound_statement) @local.block)
(preproc_ifdef (compound_statement) @local.block)
(preproc_else (compound_statement) @local.block)
(preproc_elif (compound_statement) @local.block)

; Names known to be namespaces, so that `void ns::f() {}` is a function, not a method.
(using_declaration "namespace" (_) @local.namespace)
(namespace_alias_definition name: (_) @local.namespace)

; References, the tags kinds: call targets, types, qualifier segments, member names and the
; macros `#ifdef` tests. cpp.py drops definitions' own names.
(call_expression function: (identifier) @reference.call)
(template_function name: (identifier) @reference.call)
(qualified_identifier name: (identifier) @reference.call)
(type_identifier) @reference.type
(namespace_identifier) @reference.namespace
(field_expression field: (field_identifier) @reference.field)
(field_initializer (field_identifier) @reference.field)
(preproc_ifdef name: (identifier) @reference.macro)
(preproc_defined (identifier) @reference.macro)

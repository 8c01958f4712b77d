; Definitions and references of Rust source, for extractors/rust.py.
; Definitions capture the whole item; rust.py reads its `name` (or impl `type`/`trait`) field,
; tells methods from free functions by their enclosing impl/trait, and drops references that are
; a definition's own name. rust.py runs this file and text.scm as one query: one tree traversal.

; ---- definitions
[(function_item) (function_signature_item)] @definition.function
(struct_item) @definition.struct
(enum_item) @definition.enum
(enum_variant) @definition.variant
; A named field of a struct, a union or a struct-like variant; tuple fields have no name.
(field_declaration) @definition.field
(union_item) @definition.union
(trait_item) @definition.trait
(impl_item) @definition.impl
(mod_item) @definition.module
(macro_definition) @definition.macro
[(const_item) (static_item)] @definition.constant
[(type_item) (associated_type)] @definition.type

; ---- references
; Every type name: annotations, generics, impl headers, struct literals and patterns.
(type_identifier) @reference.type

(call_expression function: (identifier) @reference.call)
(generic_function function: (identifier) @reference.call)
(macro_invocation macro: (identifier) @reference.macro)

; Field uses `a.b` (reads, writes) and method calls `a.b()`, as C's `a.b`; `a.0` has no name.
(field_expression field: (field_identifier) @reference.field)
; Fields named in a struct literal or pattern: `Pool { depth: 3, items }`, `let Pool { depth, .. }`.
(field_initializer field: (field_identifier) @reference.field)
(shorthand_field_initializer (identifier) @reference.field)
(field_pattern name: (field_identifier) @reference.field)
(field_pattern name: (shorthand_field_identifier) @reference.field)

; Path segments: `a::b::c`, `io::Error`, `use a::{b, c as d}`.
(scoped_identifier path: (identifier) @reference.path)
(scoped_identifier name: (identifier) @reference.path)
(scoped_type_identifier path: (identifier) @reference.path)
(scoped_use_list path: (identifier) @reference.path)
(use_declaration argument: (identifier) @reference.path)
(use_list (identifier) @reference.path)
(use_as_clause path: (identifier) @reference.path)
(use_wildcard (identifier) @reference.path)

; Tuple-struct and enum-variant patterns: `Some(x)`, `Ok(v)`.
(tuple_struct_pattern type: (identifier) @reference.type)

; Macro arguments are flat token trees: take what is called there (`f(..)`, `m!(..)`). Paths
; (`a::b` as `a` `::` `b`) are left out: anchoring on `::` tokens costs the query a tenth more.
(token_tree (identifier) @reference.call . (token_tree))

"""Macros that hide C and C++ declarations, found before parsing and blanked out.

Real headers hide declarations behind macros tree-sitter cannot expand (`class LLVM_ABI Foo`,
`SPDLOG_INLINE void logger::flush()`, `Py_END_ALLOW_THREADS`, `DEFINE_FN(int, 16)` alone on a
line, a C header's `extern "C" {` guard). `blank_macros` scans the source for them, with regexes
and a few looks around each candidate, and replaces them by spaces (newlines kept), so every
offset and line number of the text tree-sitter parses is the file's own. cpp.py parses the
blanked text and keeps the blanked runs' names as references; what each scan blanks, and why,
is said beside it. The lexer for text tree-sitter leaves unread (TOKEN) and the keywords no
macro body names (KEYWORDS) live here too: the scans need them, and cpp.py's reader shares them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import partial
from itertools import chain

from .cpp_namespaces import CONDITIONAL_DIRECTIVE

# Keywords tree-sitter reads as the names of template calls: `static_cast<T>(x)`.
CASTS = frozenset({b"static_cast", b"dynamic_cast", b"const_cast", b"reinterpret_cast"})
KEYWORDS = (
    frozenset(
        b"""alignas alignof auto bool break case catch char class const constexpr continue decltype
    default defined delete do double else enum explicit extern false float for friend goto if
    inline int long namespace new noexcept nullptr operator private protected public register
    return short signed sizeof static static_assert struct switch template this throw true try
    typedef typename union unsigned using virtual void volatile while""".split()
    )
    | CASTS
)  # not names a macro body uses


# A macro's arguments, over lines too (at most 8 line breaks, no parentheses, braces or `;`
# inside), never across a line that starts a comment or a directive: an attribute macro spelled
# over two lines; blanked across `///`, LLVM's doc comments broke. Runs of a line's characters
# between the breaks: as fast as the one-line pattern was on the kernel sample.
_ARGUMENTS_OVER_LINES = rb"\([^();{}\n]*(?:\n(?![ \t]*(?:/[/*]|\*|#))[^();{}\n]*){0,8}\)"

# `class LLVM_ABI Foo {`, `struct LLVM_NODISCARD Foo final : Base {`, `class GTEST_API_ Foo {`,
# `struct ABSL_DECLSPEC Storage<T, I, true> : T {`, `class Q_CORE_EXPORT QEvent // base\n{`,
# `class PROTOBUF_EXPORT PROTOBUF_ALIGNAS(8) Arena final {` (a run of them), and
# before a conditional base clause (`class Q_CORE_EXPORT QCoreApplication\n#ifndef ..`); a
# macro's arguments may run over lines (benchmark's `class BENCHMARK_EXPORT
# BENCHMARK_DEPRECATED_MSG(\n "..") CSVReporter`, range-v3's deprecations: 32 lost). One
# regex per keyword:
# a literal prefix makes the scan several times faster than an alternation.
_EXPORT_MACROS = tuple(
    re.compile(
        keyword + rb"[ \t]+((?:[A-Z][A-Z0-9_]*[A-Z0-9_](?:" + _ARGUMENTS_OVER_LINES + rb")?\s+)+)"
        rb"(?=(?!final\b|[A-Z0-9_]*(?:FINAL|SEALED)(?!\w))"
        rb"[A-Za-z_]\w*\s*(?:<[^;{}]*>\s*)?(?:final\s*)?(?://[^\n]*\s*)?[:{#])"
    )
    for keyword in (b"class", b"struct", b"union")
)
# `class Foundation_API Runnable {` (Poco: 556 classes), `class mosqpp_EXPORT mosquittopp {`
# (mosquitto): an export macro not in capitals, named as such macros are (an underscore, a
# capital letter). `struct addrinfo hints{};` declares a variable, so the brace must end its
# line (a body), or a base clause follow (`struct stat Timer::now()` returns a `struct stat`:
# `::` is none); never a keyword (_not_keywords).
_LOWER_EXPORT = rb"(?=\w*[a-z])(?=\w*[A-Z])[A-Za-z]\w*_\w*"  # `Foundation_API`, `mosqpp_EXPORT`
_LOWER_EXPORT_MACROS = tuple(
    re.compile(
        keyword + rb"[ \t]+(" + _LOWER_EXPORT + rb")[ \t]+"
        rb"(?=(?!final\b)[A-Za-z_]\w*[ \t]*(?:<[^;{}()]*>[ \t]*)?(?:final[ \t]*)?"
        rb"(?:(?://[^\n]*)?\r?\n[ \t]*){0,200}(?:\{[ \t]*(?:\r?\n|//|/\*)|:(?!:)))"
    )  # Poco documents a class between its head and its body: `///` lines (at most 200)
    for keyword in (b"class", b"struct", b"union")
)
# `class Verifier FLATBUFFERS_FINAL_CLASS {`, `struct Type MY_FINAL : private Base {`: a macro
# (most often for `final`) after a class's name. Left in, tree-sitter-cpp lost the class and
# read its members as free functions (flatbuffers: 67 classes). The name must not be capitals
# itself (`class API FOO {` names which?); _after_name_macros checks it. Both runs are bounded:
# unbounded, `class AB AB AB ...` without a brace split them at every word, quadratic in the
# line (a 20 KB line took 6 s).
_AFTER_NAME_MACROS = tuple(
    re.compile(
        keyword
        + rb"[ \t]+((?:[A-Z][A-Z0-9_]*[A-Z0-9_](?:"
        + _ARGUMENTS_OVER_LINES
        + rb")?\s+){0,4})"
        rb"((?!final\b)[A-Za-z_]\w*)(?!\w)[ \t]*(?:<[^;{}()]*>[ \t]*)?"
        rb"((?:[A-Z][A-Z0-9_]*[A-Z0-9_](?!\w)(?:[ \t]*\([^()\n]*\))?[ \t]*){1,4})"
        rb"(?=\s*(?:final\s*)?(?:\{|:(?!:)))"
    )
    for keyword in (b"class", b"struct")
)
# Macros in declaration position (`SPDLOG_INLINE void logger::flush()`, `FMT_BEGIN_NAMESPACE`,
# `Q_OBJECT`, `extern __printf(4, 5) void audit_log(...)`, systemd's `_malloc_ _alloc_(1, 2)
# static inline void *f(`): at a line's start, after storage keywords, a run of ALL_CAPS words
# with an underscore or after `__` (`__TBB_NOINLINE_SYM`, onetbb's `__TBB_requires(..)`, whose
# arguments may run over lines), `__name(...)` calls or `_name_` words (and calls). _macro_spans
# blanks a run when a declaration follows it; a word without an underscore (`DWORD`, `BOOL`) is
# a type, never blanked.
# After the indent, the first letter of a keyword or a macro, looked at once: a line that starts
# otherwise (most) fails there instead of at every shorter indent (0.52 -> 0.31 s on the
# kernel sample and LLVM).
_DECLARATION_MACROS = re.compile(
    rb"\n[ \t]*(?=[A-Z_cefistv])(?:(?:static|inline|extern|virtual|explicit|friend|constexpr"
    # the compilers' own spellings of `inline` (the kernel's `static __always_inline
    # __alloc_size(1) void *kmalloc(..)`: kmalloc and kmalloc_node were lost)
    rb"|__always_inline|__inline__|__inline|__forceinline"
    rb"|template[ \t]*<[^;{}()\n<>]*>)[ \t]+)*"  # no `<>` inside: one way to split, no ReDoS
    rb"((?:(?:(?:_?[A-Z][A-Z0-9]*_[A-Z0-9_]*|__[A-Z][A-Z0-9_]*|__[A-Z]\w*(?=[ \t]*\())(?!\w)"
    rb"(?:[ \t]*\([^()]*(?:\([^()]*\)[^()]*)*\))?"  # capitals: their arguments on many lines
    rb"|(?:__[a-z]\w*(?=[ \t]*\()|_[a-z][a-z0-9_]*_)(?!\w)"
    rb"(?:[ \t]*\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\))?)[ \t]*)+)"
    # a `{` after: `Q_FOREVER {` (Qt's `for (;;)`), `SPDLOG_TRY {`, macros that open a block
    rb"(?=[ \t]*(?:\n|//|/\*|[A-Za-z_~{]))"
)  # `\n` first, not `^`: a literal prefix lets the scan skip from line to line
# A lower-case macro that stands for a specifier (simdjson's `simdjson_inline`, string-view
# lite's `nssv_constexpr` and `nssv_noexcept`, `really_inline`): named `<prefix>_` and the
# specifier it expands to. Left in, tree-sitter read it as a return type, and simdjson lost 165
# constructors, conversion operators and methods. Blanked only where no variable can stand:
# first on its line (after specifiers) and followed by a name, or after a parameter list.
_LOWER_SPECIFIER = (
    rb"(?:[a-z][a-z0-9]*_(?:really_|force_|always_)?(?:inline|noinline|forceinline|noexcept"
    rb"|constexpr(?:1[147]|2[03])?|nodiscard)|really_inline)(?![\w(])"
)
_LOWER_SPECIFIER_WORDS = (b"_inline", b"_noexcept", b"_constexpr", b"_nodiscard")
_LEADING_LOWER_SPECIFIER = re.compile(
    rb"\n[ \t]*(?:(?:static|inline|extern|virtual|explicit|friend|constexpr)[ \t]+)*"
    rb"(" + _LOWER_SPECIFIER + rb")[ \t]+(?=[A-Za-z_~])"
)
_TRAILING_LOWER_SPECIFIER = re.compile(
    rb"\)[ \t]*(?:(?:const|volatile|&&?)[ \t]*)*(" + _LOWER_SPECIFIER + rb")"
    rb"(?=\s*(?://[^\n]*\n\s*)?(?:\{|;|:(?!:)|=|->|override\b|final\b|const\b|noexcept\b))"
)
_MACRO_TYPED_HEAD = re.compile(
    rb"[A-Z][A-Z0-9]*_[A-Z0-9_]*[ \t]*\([^()\n]*\)(?:[ \t*]+[A-Za-z_]\w*[ \t]*\(|\s*\{)"
)
# What may follow a blanked run: comments and directives are skipped, then a keyword that
# starts a declaration, or names up to the `(` of a function declarator.
_SKIPPED = re.compile(rb"(?:\s+|//[^\n]*|#[^\n]*)*")  # block comments: _Skipper
# The same with a directive continued by `\` skipped whole: after openssl's
# `#define IA5_OFFSET_LEN(b, o) \` comes its body, no declaration (_call_lines).
_SKIPPED_DIRECTIVES = re.compile(rb"(?:\s+|//[^\n]*|#(?:[^\\\n]|\\(?:\r?\n|.))*)*")
WORD = re.compile(rb"[A-Za-z_]\w*")
_DESTRUCTOR = re.compile(rb"~[ \t]*[A-Za-z_]\w*[ \t]*\(")
_QUALIFIERS = frozenset((b"const", b"volatile"))
_DECLARATION_KEYWORDS = frozenset(
    b"""class struct union enum namespace template typedef using static inline extern virtual
    explicit friend constexpr consteval const volatile unsigned signed void int char bool long
    short float double auto typename operator public private protected signals slots""".split()
)
_MACRO_LINE = re.compile(
    rb"[A-Z][A-Z0-9]*_[A-Z0-9_]*(?!\w)[ \t]*(?:\([^()\n]*\))?[ \t]*(?=\n|//|/\*)"
)
# `xxh_u64* XXH_RESTRICT acc`: a macro between a pointer and its name is a qualifier; left in,
# tree-sitter-cpp reads the parameter as a multiplication and loses the function.
_POINTER_MACRO = re.compile(
    rb"\*[ \t]*(?:const[ \t]+)?([A-Z][A-Z0-9]*_[A-Z0-9_]*)[ \t]+(?=[A-Za-z_])"
)
# `get_user_commands(expand_T *xp UNUSED, int idx)` (Vim, 1,271 times; git), `UNUSED_PARAM`:
# an attribute macro after a parameter's name. Left in, tree-sitter lost the function now and
# then (Vim's get_user_cmd_flags). _parameter_macros checks that a type stands before the name.
# Only names holding UNUSED (UNUSED_PARAM, ATTRIBUTE_UNUSED, G_GNUC_UNUSED ...), found from
# that word: a regex for any capitalised word there cost 3.7 s of CPU on every 10th kernel file.
_PARAMETER_MACRO = re.compile(rb"[A-Z0-9_]*UNUSED[A-Z0-9_]*(?![\w])(?=[ \t]*[,)])")
_TAG_KEYWORDS = (b"struct", b"union", b"enum")  # `struct foo BAR`: BAR is the name
_TYPE_WORDS = frozenset(
    b"""const volatile unsigned signed struct union enum long short int char float double
    void bool register static inline restrict auto""".split()
)
# `size_t pid() SPDLOG_NOEXCEPT {`, `StringRef str() const LLVM_LVALUE_FUNCTION {`, `void f()
# NOEXCEPT {`: a macro after a function declarator's `)` (and its qualifiers). Left in, tree-sitter-cpp reads `pid()` as an
# initialiser and the macro as the declared name, and the function is lost.
# In C too: Vim's `int smsg(const char *, ...) ATTRIBUTE_COLD ATTRIBUTE_FORMAT_PRINTF(1, 2);`
# (a run of them, or on the next, indented line) was read as a call and the prototype lost.
# _trailing_macros checks that the `)` closes a parameter list after a name. At most six in a
# run: an X-macro list's line (`OP(A) OP(B) ...`, 47 KB) made every `)` scan to the line's end.
_TRAILING_MACRO = re.compile(
    rb"\)(?:[ \t]*\n)*[ \t]+(?:(?:const|noexcept|override|final)(?:[ \t]*\n)*[ \t]*|&&?[ \t]*)*"
    rb"((?:(?:[A-Z_][A-Z0-9]*_[A-Z0-9_]*|[A-Z][A-Z0-9]+)(?!\w)"
    rb"(?:[ \t]*\((?:[^()\n]|\([^()\n]*\))*\))?[ \t]*){1,6})"
    rb"(?=\s*(?:\{|;|:(?!:)|=[ \t]*(?:0|default|delete)\b|->"
    rb"|(?:override|final|const|noexcept)\b))"
)
# glibc's regex (copied into git, gnulib and many GNU trees): `static int f (re_dfa_t *dfa)\n
#      internal_function;`, a lower-case attribute macro alone before a prototype's `;`. Left
# in, the prototypes after it ran into the next function (git's `regexec` was lost). Only the
# `*_function` spelling glibc uses: a lower-case word there is otherwise K&R's (two words).
_TRAILING_LOWER_MACRO = re.compile(
    rb"\)(?:[ \t]*\r?\n)*[ \t]+([a-z_][a-z0-9_]*_function)[ \t]*(?=;)"
)
# xz's `extern LZMA_API(void) lzma_end(lzma_stream *strm) lzma_nothrow;`, `..)\n\t\tlzma_nothrow
# lzma_attr_pure;`, `..) lzma_attribute((__malloc__)) lzma_attr_alloc_size(1);`, glibc's `__wur`:
# attribute macros in any case after a prototype's `)`, before its `;` or `{`. No declarator puts
# a name there, but a type made by a macro does (`TAILQ_ENTRY(foo) link;`, `PyAPI_DATA(const char
# *) name;`, K&R's `f(a) int a; {`): _trailing_words wants a parameter list that names a
# parameter (or is empty, `void`, `...`). Left in, tree-sitter lost the prototype, and its doc
# documented nothing (xz: 105 of liblzma's 107 API functions). Keywords and `__attribute__`
# (which tree-sitter reads) end the run: C++'s `mutable`, `try`, `requires`.
_ATTRIBUTE_CALL_ARGUMENTS = rb"\((?:[^()\n]|\((?:[^()\n]|\([^()\n]*\))*\))*\)"  # three levels
_TRAILING_WORD = (  # the keywords most often after a `)` fail here, the rest in _trailing_words
    rb"(?!(?:__attribute__|__asm__|__asm|asm|override|final|noexcept|const|volatile|return|do"
    rb"|struct|union|enum|static|extern|typedef|int|void|unsigned|bool|char|long|break|goto"
    rb"|continue|if|else|defined)(?!\w))[A-Za-z_]\w*(?!\w)(?:[ \t]*"
    + _ATTRIBUTE_CALL_ARGUMENTS
    + rb")?"
)
_TRAILING_ITEM = re.compile(rb"([A-Za-z_]\w*)(?:[ \t]*(" + _ATTRIBUTE_CALL_ARGUMENTS + rb"))?")
_TRAILING_WORDS = re.compile(  # all in a lookahead: a run that is no attribute consumes nothing
    rb"\)(?=[ \t]*(?:\r?\n[ \t]*)*(?<=[ \t\n])(?=[A-Za-z_&])"
    rb"(?:(?:const|volatile|noexcept|override|final)"
    rb"(?!\w)[ \t]*(?:\r?\n[ \t]*)*|&&?[ \t]*)*"
    rb"(" + _TRAILING_WORD + rb"(?:[ \t]*(?:\r?\n[ \t]*)?" + _TRAILING_WORD + rb"){0,5})"
    rb"\s*(?:;|\{|=[ \t]*(?:0|default|delete)\b"
    rb"|(?:__attribute__|__asm__|__asm|asm|override|final|noexcept)(?!\w)))"
)
# A name in the parameters: after a type's word, `*`, `&` or `>`, no keyword itself; or the
# parameter is a function pointer (`void (*cb)(int)`, its groups emptied first).
_NAMED_PARAMETER = re.compile(
    rb"([A-Za-z_]\w*|[*&>\]])[\s*&]+([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*(?:=[^=]*)?\Z"
    rb"|[\w*&>][\s*&]*\(\)\s*\(\)\s*\Z"
)
_NOT_PARAMETER_NAMES = KEYWORDS | frozenset(
    b"restrict __restrict __restrict__ _Bool _Complex".split()
)
_RECORD_KEYWORDS = frozenset(b"struct union enum class typename".split())  # `(struct foo)`
_NOT_TRAILING_WORDS = KEYWORDS | frozenset(
    b"""mutable requires override final try throw noexcept asm __asm __asm__ __attribute__
    __declspec restrict __restrict __restrict__ consteval constinit co_await co_return co_yield
    and or not xor bitand bitor compl not_eq and_eq or_eq xor_eq __extension__""".split()
)
# `local void fill_window OF((deflate_state *s));` (zlib), `extern int *find_flag PARAMS((int));`
# (bash), BSD's `__P((int))`: a macro that hides a prototype's parameters from pre-ANSI
# compilers. Left in, tree-sitter read the macro as the function (zlib: 150 functions named
# `OF`) or lost the prototype. The macro, its `(` and its `)` are blanked, the inner group kept.
_PROTOTYPE_WRAPPER = re.compile(rb"(?:\b([A-Za-z_]\w*)|\))[ \t]+([A-Z_][A-Z0-9_]*)[ \t]*\Z")
# `static void __printf(2, 3)\nsend_monitor_note(..)` (the kernel, 69 of them), tmux's
# `static void printflike(3, 4)\nargs_print_add(..)`: an attribute macro at the end of the return
# type's line. Left in, tree-sitter named the function after the macro (`__printf`).
# The name may be indented (xz's `extern void * lzma_attribute((__malloc__))
# lzma_attr_alloc_size(1)\n\t\tlzma_alloc_zero(..);`), and is no keyword (bc's K&R `f
# DC_DECLARG((a))\n\tint (*a) ..` declares a parameter).
_ATTRIBUTE_LINE_END = re.compile(rb"\)[ \t]*\n(?=[ \t]*([A-Za-z_]\w*)[ \t]*\()")
# On the name's own line: libgit2's `static int GIT_FORMAT_PRINTF(2, 3) cl_setenv_printf(..)`.
# Only number arguments, matched here in full: `) name(` alone is in every other statement.
# Or an attribute's own parentheses (`((..))`, checked after): xz's `static inline uint32_t
# lzma_attribute((__always_inline__)) lzma_memcmplen(..)`.
_ATTRIBUTE_BEFORE_NAME = re.compile(
    rb"(\((?:[ \t]*\d+[ \t]*,)*[ \t]*\d+[ \t]*\))[ \t]+(?=[A-Za-z_]\w*[ \t]*\((?!\())"
)  # not before another attribute's `((`: gnulib's `FMT (3, 0) _GL_ARG_NONNULL ((3))\nname(`
_DOUBLE_PARENTHESES_BEFORE_NAME = re.compile(rb"\)\)[ \t]+(?=[A-Za-z_]\w*[ \t]*\((?!\())")
_NUMBER_ARGUMENTS = re.compile(rb"[ \t]*\d+[ \t]*(?:,[ \t]*\d+[ \t]*)*")
_ATTRIBUTE_ARGUMENTS = re.compile(rb"\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)")
# The type before the attribute, and the attribute's name: a run of them with their arguments
# (numbers or `((..))`), as xz's `extern void * lzma_attribute((__malloc__))
# lzma_attr_alloc_size(1)\nlzma_alloc(..)` writes two (the function was named `lzma_attribute`).
_TYPED_ATTRIBUTE = re.compile(
    rb"(?:^|\n)[ \t]*([A-Za-z_]\w*)[\w \t*]*?[ \t*]"
    rb"((?:[A-Za-z_]\w*[ \t]*(?:\((?:[ \t]*\d+[ \t]*,)*[ \t]*\d+[ \t]*\)"
    rb"|\(\((?:[^()\n]|\([^()\n]*\))*\)\))[ \t]+)*[A-Za-z_]\w*)[ \t]*\Z"
)
# `EXTERN char e_interrupted[]` (Vim's errors.h, globals.h and option.h: 2,266 of them), `EXTERN
# schar_T *ScreenLines`: a capitalised word at a line's start that expands to a storage class.
# _DECLARATION_MACROS wants an underscore, as `DWORD count;` is a type; this one wants what
# only a macro leaves room for after it: a C type keyword, or a type and then a name.
_STORAGE_MACRO = re.compile(
    rb"\n([A-Z][A-Z0-9]*)[ \t]+(?=(?:char|short|int|long|unsigned|signed|float|double|void|const"
    rb"|volatile|struct|union|enum)\b"
    rb"|[A-Za-z_]\w*[ \t*]+[A-Za-z_]\w*(?:[ \t]*[\[=;,]|[ \t]+[A-Z][A-Z0-9_]*[ \t]*\())"
)
# libjpeg-turbo's `INLINE\nLOCAL(void)\nconvert(..)` (21 functions): a capitals word alone on the
# line before a return-type macro (`LOCAL(void)`, `METHODDEF(int)`) that heads a function.
# tree-sitter takes `LOCAL(void)` as the type alone; after `INLINE` it read a function `LOCAL`.
_LONE_MACRO_BEFORE_TYPE_MACRO = re.compile(
    rb"\n(?:(?:static|extern|inline)[ \t]+)*([A-Z][A-Z0-9_]*)[ \t]*\r?\n"
    rb"(?=[A-Z][A-Z0-9_]*\([^()\n]*\)[ \t]*\r?\n[ \t]*[A-Za-z_]\w*[ \t]*\()"
)
# Vim's `EXTERN long Columns INIT(= 80);` and `char e_interrupted[]\n\tINIT(= N_("Interrupted"));`
# (2,000 of them): a macro that keeps or drops an initialiser. No C has `(=`; left in, the
# declaration was an error and its variable lost.
_INITIALIZER_MACRO = re.compile(rb"\b[A-Z][A-Z0-9_]*[ \t]*\Z")
_STRING_REST = re.compile(rb'(?:[^"\\\n]|\\.)*"')  # a string literal after its opening quote
_DECLARATION_END = re.compile(rb"[ \t]*[;,]")
# `struct x {\n..\n} __packed;`, `} __packed __aligned(4);`, `} __randomize_layout;` (the
# kernel: 11,507 of them): attribute macros between a record's `}` and its `;`, or the name it
# declares (`typedef struct {..} __aligned(8) psw_compat_t;`: 165 in the kernel). Left in, each
# declared a variable named `__packed` (or a function `__aligned`, the typedef's name lost).
_RECORD_ATTRIBUTES = re.compile(
    rb"\n[ \t]*\}[ \t]*((?:__[a-z_]\w*(?!\w)(?:[ \t]*\((?:[^()\n]|\([^()\n]*\))*\))?[ \t]*)+)"
    rb"(?=;|([A-Za-z_]\w*)[ \t]*;)"
)
# `bool scheduled_ GUARDED_BY(mutex_);`, `Mutex mu_ ACQUIRED_AFTER(other_);` (leveldb, abseil's
# thread-safety annotations, C++): a macro call after a variable's name. Left in, tree-sitter
# read a method named GUARDED_BY (leveldb: 24). A type (a word, `>`, `*` or `&`) must stand
# before the name, and the name be no keyword (`return FOO(x);`). The call is found first, the
# words before it looked at after: one regex for both cost 2.6 s on 108 MB of C and C++.
# The same in capitals, glib's way: `} GStaticMutex GLIB_DEPRECATED_TYPE_IN_2_32_FOR(GMutex);`,
# `} GLIB_DEPRECATED_TYPE_IN_2_32;`. Left in, a typedef was named after the macro (or lost) and
# a struct declared a variable or a function named after it. After a name, or with arguments,
# the run is a macro; alone, it is one unless a `typedef` heads the record (`} THREADNAME_INFO;`
# names the type).
# HarfBuzz's `struct {..}\nHB_FUNCOBJ (hb_identity);` puts the macro on the next line: a
# function named `HB_FUNCOBJ` whose scope took the struct's `operator ()`s (40 lost). There the
# braces must be a record's (`}\nEXPORT_SYMBOL(f);` follows a function's).
# haproxy's `struct fdlist_entry {..} ALIGNED(8);`: a call needs no underscore (a function or
# variable `ALIGNED` was made, 7).
_CALL_ARGUMENTS = rb"[ \t]*\((?:[^()\n]|\([^()\n]*\))*\)"  # one line, two levels deep
_RECORD_CAPITALS = re.compile(  # from each `}` (rarer than line ends), first on its line
    rb"\}([ \t]*(?:\r?\n[ \t]*)?)(?:([A-Za-z_]\w*)[ \t]+)?"
    rb"((?:[A-Z][A-Z0-9]*_[A-Z0-9_]*(?:"
    + _CALL_ARGUMENTS
    + rb")?|[A-Z][A-Z0-9]+"
    + _CALL_ARGUMENTS
    + rb"))[ \t]*;"
)
# libarchive's xxhash.c `typedef struct _U32_S { U32 v; } _PACKED U32_S;`: the macro before the
# name. Left in, the typedef was named `_PACKED`. Only after a record's braces (a function's `}`
# may be followed by a declaration of a type in capitals).
_RECORD_MACRO_BEFORE_NAME = re.compile(
    rb"\}[ \t]*(_?[A-Z][A-Z0-9_]*(?:" + _CALL_ARGUMENTS + rb")?)[ \t]+"
    rb"(?!(?:const|volatile)\b)[A-Za-z_]\w*[ \t]*;"
)
_RECORD_DEFINED_MACRO = re.compile(rb"\}[ \t]*([A-Z][A-Z0-9_]*)[ \t]*;")
_DEFINED_CAPITALS = re.compile(rb"#[ \t]*define[ \t]+([A-Z][A-Z0-9_]*)(?![\w(])")
_RECORD_HEAD_WORD = re.compile(rb"\b(?:struct|union|class)\b")
_ANNOTATION_CALL = re.compile(
    rb"[ \t]([A-Z][A-Z0-9]*_[A-Z0-9_]*[ \t]*" + _ARGUMENTS_OVER_LINES + rb")(?=[ \t]*[;=,])"
)
_ANNOTATED_NAME = re.compile(rb"[\w>*&][ \t]+([A-Za-z_]\w*)[ \t]*\Z")
_TYPEDEF = re.compile(rb"\btypedef\b")
_CAPITAL_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_NAME_BEFORE = re.compile(rb"(?:\b([A-Za-z_]\w*)|\boperator[ \t]*[^\w\s]{1,3})[ \t]*\Z")
# A function pointer's parenthesised declarator before its parameter list: redis' module API,
# `REDISMODULE_API float (*RedisModule_GetUsedMemoryRatio)() REDISMODULE_ATTR;` x 300. Its
# trailing macro left in, the parse lost the definition of `RedisModule_Init` 45 lines below.
_POINTER_DECLARATOR = re.compile(
    rb"\([ \t]*[*&^][ \t*&^]*(?:[A-Za-z_]\w*[ \t]*::[ \t]*)*[A-Za-z_]\w*[ \t]*\)[ \t]*\Z"
)
_NOT_DECLARATORS = frozenset(
    b"if while for switch return sizeof alignof decltype noexcept catch throw".split()
)
# Names whose parentheses hold a type or an expression, never parameters: `typeof(x) y;`.
_NOT_FUNCTIONS = _NOT_DECLARATORS | frozenset(
    b"""typeof __typeof__ __typeof _Atomic alignas _Alignas __declspec __attribute__ _Generic
    offsetof va_arg defined""".split()
)
# `void SPDLOG_INLINE thread_pool::post_log(`: a macro between a return type and the function's
# name. Left in, tree-sitter-cpp read the macro as a scope (`SPDLOG_INLINE::thread_pool`). After
# more words (`PUGI__FN void PUGIXML_FUNCTION set_memory_management_functions(`) and before an
# operator (`bool PUGIXML_FUNCTION operator&&(`) too: pugixml's were `PUGIXML_FUNCTION::as_utf8`.
_MID_MACRO = re.compile(
    rb"\n[ \t]*(?!(?:return|else|case|new|delete|throw|goto|co_return|co_yield)\b)"
    rb"(?:[A-Za-z_][\w:<>]*[ \t*&]+){1,3}?([A-Z][A-Z0-9]*_[A-Z0-9_]*)[ \t]+"
    rb"(?=(?:~?[A-Za-z_][\w:~]*|operator[ \t]*(?:[^\w\s(]{1,3}|\(\)))[ \t]*\()"
)
# `JSON_PRIVATE_UNLESS_TESTED:`, `Q_SIGNALS:`: a macro that expands to an access specifier, alone
# on its line. Left in, tree-sitter-cpp reads it as a bit field and loses the class from there
# (nlohmann's basic_json ended at its first one). The macro and its colon are blanked: the
# members after it keep the access before it, which no symbol records.
_ACCESS_MACRO = re.compile(rb"\n[ \t]*([A-Z][A-Z0-9]*_[A-Z0-9_]*[ \t]*:)(?!:)[ \t]*(?=\n|//|/\*)")
# `_cffi_to_c_SIGNED_FN(int, 16)` alone on a line at column 0, no `;`: a macro that expands to
# definitions. Left in, tree-sitter takes it as the head of the function after it.
# Its arguments may run over indented lines (jemalloc's `CTL_RO_NL_CGEN(config_prof, x,\n
# bool)`: a run of them named the function after them `CTL_RO_NL_CGEN`).
_CALL_LINE = re.compile(
    rb"\n(([A-Za-z_]\w*)[ \t]*\(((?:[^()\n]|\([^()\n]*\)|\n(?=[ \t]))*)\))[ \t]*(?=\n|//|/\*)"
)
# `GMOCK_DEFINE_DEFAULT_ACTION_FOR_RETURN_TYPE_(signed char, '\\0');` at column 0: a macro that
# expands to declarations, called with what no parameter list holds (a character or number
# literal, an empty argument). Left in, tree-sitter-cpp read a run of them as one function whose
# body swallowed the 280 lines after it. The call and its `;` are blanked, and its strings and
# names read from its text (re2's `DEFINE_FLAG(int, regexp_stack_limit, 256 << 10,\n "default
# PCRE stack limit (bytes)");` over two lines had made the rest of the file a function).
_STRING = rb'"(?:[^"\\\n]|\\.)*"'  # a string literal: its parentheses are no grouping
_CALL_STATEMENT = re.compile(
    rb"\n([A-Z][A-Z0-9]*_[A-Z0-9_]*[ \t]*\(((?:"
    + _STRING
    + rb'|[^()"]|\((?:'
    + _STRING
    + rb'|[^()"])*\))*)\)[ \t]*;)'
)
_NOT_PARAMETERS = re.compile(rb"'|\"|(?:^|[(,\s])[0-9]|,[ \t]*(?:,|\Z)|\A[ \t]*,")
_SCOPE_OPENER = re.compile(rb"\b(?:namespace|class|struct|union|extern)\b")
# `BOOST_TRY {` .. `} BOOST_CATCH(...) {` .. `} BOOST_CATCH_END` (JSON_TRY, QT_TRY, EIGEN_TRY):
# macros for `try` and `catch` where exceptions may be off. Left in, `BOOST_CATCH(...) {` is a
# call then a block, and tree-sitter-cpp lost the class from there (boost's deque: every member
# after the first). They become the keywords they stand for; `_CATCH_END` is blanked.
# Catch2 names its clauses `CATCH_CATCH_ANON (type) {` and `CATCH_CATCH_ALL {` (`catch (...)`):
# a `_CATCH_` name before `(` is a clause too, and `_CATCH_ALL` before `{` the clause for all.
_EXCEPTION_MACROS = re.compile(
    rb"\b([A-Z][A-Z0-9]*(_TRY(?=\s*\{)|_CATCH(?:_(?!END\b)[A-Z0-9]+)?(?=[ \t]*\()"
    rb"|_CATCH_ALL(?=\s*\{)|_CATCH_END(?![\w(])))"
)
# Microsoft's calling conventions: tree-sitter reads `void __stdcall f();` (a declaration, not a
# definition) as an error, and inside `extern "C"` the rest of the file went with it (Catch2's
# `extern "C" __declspec(dllimport) void __stdcall DebugBreak();`).
_CALLING_CONVENTIONS = (b"stdcall", b"cdecl", b"fastcall", b"thiscall", b"vectorcall", b"clrcall")
# A calling convention or export macro inside a function-pointer typedef's parentheses, as
# OpenGL's and Windows' headers write them: `typedef GLsync (APIENTRYP PFNGLFENCESYNCPROC)
# (GLenum condition, GLbitfield flags);`, `typedef BOOL (WINAPI *LPFN)(PDWORD);`. Unless the
# return type was a keyword, tree-sitter read a call there, and the typedef was named after a
# parameter (`flags`, `void`) or lost: 598 of SDL2's. Only words in capitals, and only where a
# name follows them inside the parentheses. The scan starts at the literal (a `\b` first made
# the engine try every byte).
_TYPEDEF_CALL_MACROS = re.compile(
    rb"typedef\b[^;{}()]{1,200}?\([ \t]*((?:[A-Z_][A-Z0-9_]+[ \t]+|[A-Z_][A-Z0-9_]+(?=\*))+)"
    rb"\*?[ \t]*[A-Za-z_]\w*[ \t]*\)[ \t\r\n]*\("
)
# libpng's `png_uint_32 (PNGAPI\npng_get_uint_32)(png_const_bytep buf) {`: a calling-convention
# macro inside the parentheses that keep a function's name from macro expansion. Left in, the
# function was lost and its locals read as the file's variables. Only capitals, and only
# where the name, its `)` and the parameters' `(` follow.
_NAME_PARENTHESES_MACRO = re.compile(
    rb"\(([A-Z_][A-Z0-9_]+)(?:[ \t]+|[ \t]*\r?\n[ \t]*)(?=[A-Za-z_]\w*\)[ \t]*\()"
)
# A capitals macro that ends a definition's first line, after its return type, the name on the
# next line: expat's `static int PTRFASTCALL\nPREFIX(nameLength)(..) {` (its calling
# conventions), lmdb's `char * ESECT\nmdb_version(`. tree-sitter reads the word as an error, or
# (by its length: `PTRCALL` and `PTRFASTCALL` went different ways) the first line as a
# declaration and the rest as a function of its own, named by what `PREFIX(..)` wraps and
# starting a line late. The return type has a lower-case letter (in `FORCE_INLINE_TEMPLATE
# U32\n` the capitals word is zstd's type) and is no keyword; words are bounded, so a long one
# costs no backtracking.
_HEAD_KEYWORDS = (
    rb"static|inline|extern|const|volatile|unsigned|signed|register|__inline__|__inline"
)
_RETURN_TYPE_ATTRIBUTE = re.compile(
    rb"^[ \t]*(?:(?:" + _HEAD_KEYWORDS + rb")[ \t]+){0,4}"
    rb"(?!(?:" + _HEAD_KEYWORDS + rb"|return|else|case|goto|typedef|do)\b)"
    rb"(?P<type>(?:struct|enum|union)[ \t]+\w{1,80}|[A-Za-z_]\w{0,80})[ \t*]+"
    rb"([A-Z][A-Z0-9_]{2,80})[ \t]*\r?\n[ \t]*[A-Za-z_]\w{0,80}[ \t]*\(",
    re.MULTILINE,
)
_LOWER = re.compile(rb"[a-z]")
# Where one may be: a line that starts a name and its `(` after a line ending in a capital (a
# search from each `\n`, which the engine skips to; the whole pattern at every line's start
# cost 1 s of the kernel sample for no match).
_HEAD_BREAK = re.compile(
    rb"\n(?:(?<=[A-Z0-9_]\n)|(?<=[A-Z0-9_] \n))[ \t]*[A-Za-z_]\w{0,80}[ \t]*\("
)


def _return_type_attributes(source: bytes) -> Spans:
    """The capitals macros after a return type that end a head's first line
    (_RETURN_TYPE_ATTRIBUTE), found from the line break after them (_HEAD_BREAK)."""
    spans: Spans = []
    for candidate in _HEAD_BREAK.finditer(source):
        found = _RETURN_TYPE_ATTRIBUTE.match(source, source.rfind(b"\n", 0, candidate.start()) + 1)
        if found is not None and _LOWER.search(found["type"]):
            spans.append(found.span(2))
    return spans


# libgit2's `typedef int GIT_CALLBACK(git_apply_delta_cb)(const git_diff_delta *d, ..);`: a
# macro in capitals that wraps a function type's name (`#define GIT_CALLBACK(name) (*name)`).
# Left in, the typedef was named after the macro. The macro's name, its `(` and its `)` are
# blanked: `typedef int git_apply_delta_cb(..)` names the type.
_TYPEDEF_NAME_MACRO = re.compile(
    rb"typedef\b[^;{}()]{1,200}?\b([A-Z_][A-Z0-9_]*[ \t]*\()[ \t]*[A-Za-z_]\w*[ \t]*(\))"
    rb"(?=[ \t\r\n]*\()"
)
# `typedef __attribute__((aligned(8))) int aligned_int;`, `typedef __declspec(align(16)) struct
# {..} M128;`: an attribute right after `typedef`. tree-sitter read `__attribute__` as the
# typedef's type and its argument as the name (a type `aligned`), the real one a variable.
_TYPEDEF_ATTRIBUTE = re.compile(
    rb"typedef[ \t]+((?:__attribute__[ \t]*\([ \t]*\((?:[^()\n]|\([^()\n]*\))*\)[ \t]*\)"
    rb"|__declspec[ \t]*\((?:[^()\n]|\([^()\n]*\))*\))[ \t]*)+"
)
# ... and between a typedef's type and its name (libtomcrypt's `typedef ulong64
# __attribute__((__may_alias__)) LTC_FAST_TYPE;`, the kernel's tools/ and BPF samples' `typedef
# __u8 __attribute__((__may_alias__)) __u8_alias_t;`): the type was named `__attribute__`.
_TYPEDEF_NAME_ATTRIBUTE = re.compile(
    rb"typedef[ \t]+[^;{}()\n]*?[ \t](__attribute__[ \t]*\([ \t]*\((?:[^()\n]|\([^()\n]*\))*\)"
    rb"[ \t]*\))[ \t*]*[A-Za-z_]\w*[ \t]*;"
)
# ... and a capitals macro call there (libtommath's `typedef cb_t MP_DEPRECATED(rand_source)
# ltm_prime_callback;`): the type was named after the macro. After a type word only: in
# OpenSSL's `typedef STACK_OF(X509) X509_CHAIN;` the call is the type.
_TYPEDEF_NAME_CALL = re.compile(
    rb"typedef[ \t]+[A-Za-z_][\w \t*]*?[\w*][ \t]+([A-Z][A-Z0-9]*_[A-Z0-9_]*[ \t]*\([^()\n]*\))"
    rb"[ \t*]*[A-Za-z_]\w*[ \t]*;"
)
# An enum's base where tree-sitter-cpp takes none: an anonymous enum's (`enum : VkFlags {`, read
# as an enum named `VkFlags`: 111 in Vulkan's C++ headers), or a macro standing for it after the
# name (flatbuffers' `enum VTableOffset FLATBUFFERS_VTYPE {`, where the enum was lost). Blanked
# for the parse: the first is then anonymous, the second named.
_ANONYMOUS_ENUM_BASE = re.compile(rb"enum[ \t\r\n]*(:[ \t\r\n]*[A-Za-z_][\w:]*)[ \t\r\n]*\{")
# `enum MYLIB_API STATUS_CODE {`, `enum class CV_EXPORTS Flags : int {`: an export macro before
# an enum's name, as before a class's (_EXPORT_MACROS). Left in, the enum was named after the
# macro (C++) or lost (C). Capitals with an underscore only, a name and a `{` or a base after
# them; when both words are such capitals, the first is the macro (_ENUM_BASE_MACRO leaves the
# second).
_ENUM_EXPORT_MACRO = re.compile(
    rb"enum(?:[ \t]+(?:class|struct))?[ \t]+((?:[A-Z][A-Z0-9]*_[A-Z0-9_]*(?:\([^()\n]*\))?[ \t]+)"
    rb"{1,3})(?=[A-Za-z_]\w*[ \t\r\n]*(?:\{|:(?!:)))"
)
# `enum __attribute__((__packed__)) srv_ws_mode {`, `enum __packed mode {` (haproxy, GCC's
# C): an attribute between `enum` and the name, which tree-sitter does not take (a struct's it
# does). Left in, the enum and its constants were lost, with every declaration after them to the
# file's end.
_ENUM_ATTRIBUTE = re.compile(
    rb"\benum[ \t]+((?:__attribute__[ \t]*\([ \t]*\((?:[^()\n]|\([^()\n]*\))*\)[ \t]*\)[ \t]*"
    rb"|__[a-z_]\w*[ \t]+)+)(?=[A-Za-z_]\w*[ \t\r\n]*\{)"
)
_ENUM_BASE_MACRO = re.compile(
    rb"enum(?:[ \t]+(?:class|struct))?[ \t]+(?!(?:class|struct)\b)[A-Za-z_]\w*[ \t]+"
    rb"([A-Z_][A-Z0-9_]+)[ \t\r\n]*\{"
)
# A macro between a function's return type and its name when the parameters are `(void)`:
# `int HID_API_EXPORT hid_init(void)`, `static void\nATTRIBUTE_DESTRUCTOR\nxmlDestructor(void)`
# (hidapi in SDL2, libxml2). tree-sitter read `int HID_API_EXPORT` as a declaration and the
# function as `hid_init` returning `(void)`, which named nothing; with parameters it reads the
# macro as the name and _name_after_macro finds the real one. Found from each `(void)`, backwards.
_VOID_PARAMETERS = re.compile(rb"\([ \t]*void[ \t]*\)")
_MACRO_BEFORE_NAME = re.compile(
    rb"([A-Za-z_]\w*)[ \t\r\n*&]+([A-Z][A-Z0-9]*_[A-Z0-9_]*)[ \t\r\n]+[A-Za-z_]\w*[ \t]*\Z"
)
_EXPORT_LIKE = re.compile(rb"[A-Z][A-Z0-9]*_[A-Z0-9_]*")
# An `#if` .. `#endif` (no `#else`) around an attribute or a specifier inside a function's
# head: gnulib's `size_t\n#if __GNUC__ >= 3\n__attribute__ ((__pure__))\n#endif\nxsum (..)`,
# valgrind.h's `static int\n#if defined(_MSC_VER)\n__inline\n#endif\nVALGRIND_PRINTF(..)`
# (both copied into glib and many other trees). tree-sitter lost the function; its two
# directive lines are blanked, the words between them kept.
_IF_LINE = rb"#[ \t]*if(?:n?def)?\b[^\n]*"  # from its `#`: `#if`, `#ifdef`, `#ifndef` and the rest
_ENDIF_LINE = rb"[ \t]*#[ \t]*endif\b[^\n]*"  # from its line's start
_CODE_LINES = rb"((?:[ \t]*[^#\s][^\n]*\n){1,%d})"  # 1 to N lines (`% N`), none a directive
_CONDITIONAL_IN_HEAD = re.compile(
    _IF_LINE + rb"\n" + _CODE_LINES % 3 + rb"(" + _ENDIF_LINE + rb")\n"
    rb"(?=[ \t]*[A-Za-z_]\w*[ \t]*\()"
)
# The same around an attribute alone anywhere (libtomcrypt's `unsigned char PC[16][256][16]\n
# #ifdef LTC_GCM_TABLES_SSE2\n__attribute__ ((aligned (16)))\n#endif\n;` in a struct, copied into
# dropbear): left in, tree-sitter-c lost the struct and every declaration after it in the file.
_CONDITIONAL_ATTRIBUTE = re.compile(
    _IF_LINE + rb"\n[ \t]*(?:__attribute__|__declspec)[ \t]*"
    rb"\((?:[^()\n]|\((?:[^()\n]|\([^()\n]*\))*\))*\)[ \t]*\n(" + _ENDIF_LINE + rb")(?=\n)"
)
# `inline friend std::ostream& operator<<(..) {..}` (and `inline friend` before any type): an
# error to tree-sitter-cpp, which lost the friend; `friend inline` it reads. The words swap
# places, the offsets stay.
_FRIEND = re.compile(rb"friend(?!\w)")
_SPECIFIER_BEFORE = re.compile(rb"(?<!\w)(inline|constexpr)(\s+)\Z")
# `#define` and `#undef` inside an enum's braces (brotli's `typedef enum {\n#define COMMA_ ,` ..
# `} BrotliDecoderErrorCode;`) or an initializer's (rapidjson's `= {\n#define Z16 0,0,..`): the
# grammars take no directive there but a conditional, and the enum or the macro was lost. The
# directives are left to the text scan, as a branch the parse does not read. In an enum, the
# X-macro call on a line of its own that such a `#define` serves (LLVM's
# `INLINE_COST_FEATURE_ITERATOR(POPULATE_INDICES)`, no comma after it) is blanked too: left in,
# it ran into the next enumerator.
# Each scan starts at a literal, so that the regex engine skips to it (an alternation, or a
# `\b` first, made it try every byte: 2.2 s on 56 MB of the kernel's and LLVM's code).
_ENUM_OPENING = re.compile(rb"enum\b(?:\s+(?:class|struct)\b)?[^;{}()#=]{0,200}\{")  # bounded
_INITIALIZER_OPENING = re.compile(rb"=[ \t]*(?:\r?\n[ \t]*)?\{")  # FreeType: `=\n{`
# Where a body with a `#define` in it may end: its `};`. Its first `}` closes a row as often
# (sqlite's `aSyscall[] = {\n  { "open", ... },\n#define osOpen ...`: 29 macros lost).
# A typedef's `} name;` too (jemalloc's `typedef enum {\n#define OP(m) ..` `} ind_t;`).
_BODY_END = re.compile(rb"\}[ \t]*(?:[A-Za-z_]\w*[ \t]*)?;")
# pcre2's `static const char alasnames[] =\n  STRING_pla0\n  STRING_plb0\n  STRING_asr;`: string
# macros the compiler concatenates, one a line after `=` ends its line. tree-sitter named the
# array after the last one; all but the first are blanked for the parse (their names stay
# references). Looked for only after an `=` that ends its line (a scan from every `=` cost
# 0.6 s of CPU on the kernel sample).
_STRING_MACRO_RUN = re.compile(rb"=[ \t]*\n[ \t]*[A-Z]\w*((?:[ \t]*\n[ \t]+[A-Z]\w*){1,64})[ \t]*;")
# `#define mutex_enter(X)    ` with blanks and no value: tree-sitter took the next line as its
# value, and the `#define` there was lost (sqlite's mutex.h, libarchive's `ICONV_CONST `; every
# empty `#define` of a CRLF file, read with ` \n` line ends). Its last blank becomes a `;`.
# Found from each blank that ends a line (a scan of every line cost 4 s on the kernel sample).
_EMPTY_DEFINE = re.compile(rb"[ \t]*#[ \t]*define[ \t]+[A-Za-z_]\w*(?:\([^()\n]*\))?[ \t]+\n")
_DEFINE_LINES = re.compile(rb"^[ \t]*#[ \t]*(?:define|undef)\b(?:[^\\\n]|\\(?:\r?\n|.))*", re.M)
_X_MACRO_LINE = re.compile(
    rb"^[ \t]*([A-Za-z_]\w*[ \t]*\([^;{}()\n]*(?:\([^;{}()\n]*\)[^;{}()\n]*)*\))[ \t]*$", re.M
)
_EXCEPTION_KEYWORDS = {b"_TRY": b"try", b"_CATCH_ALL": b"catch(...)"}  # other clauses: `catch`
# What brace matching (closing_brace) reads: comments and literals are skipped, `#if` branches
# taken apart.
_BRACE_TOKEN = re.compile(
    rb"/\*.*?(?:\*/|\Z)|//[^\n]*|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
    rb"|^[ \t]*#[ \t]*(?P<directive>if|ifdef|ifndef|elif|else|endif)\b|(?P<brace>[{}])",
    re.DOTALL | re.MULTILINE,
)
# Only a `_TRY` block that `_CATCH(..) { .. }` clauses follow is made a `try`: spdlog's
# `SPDLOG_TRY { .. } SPDLOG_CATCH_STD` ends in a macro that is all the catch clauses, and a
# `try` without them lost the function's end (the blanked `SPDLOG_TRY` leaves a plain block).
_ARGUMENTS = re.compile(rb"[ \t]*\([^()]*(?:\([^()]*\)[^()]*)*\)")
# `class basic_stream\n#if ! BOOST_BEAST_DOXYGEN\n    : private detail::stream_base\n#endif\n{`, a
# constructor's `:\n#if FMT_GCC_VERSION ..\n basic_format_args<Context>(*this),\n#endif`: a
# conditional inside a declaration (after neither `;`, `{` nor `}`) whose lines are no
# statements. Left in, the class is lost from there. Its directive lines are blanked and, as a
# compiler reading the first branch would, its other branches.
_IF_BEFORE_BRACE = re.compile(rb"\n([ \t]*#[ \t]*if[^\n]*)\n(?=[ \t]*\{)")
_RECORD_HEAD_LINE = re.compile(
    rb"[ \t]*(?:typedef[ \t]+)?(?:struct|union|enum)[ \t]+[A-Za-z_]\w*[ \t]*"
)  # the line before _IF_BEFORE_BRACE's `#if`: _conditionals_around_bodies
_IF_DIRECTIVE = re.compile(rb"#[ \t]*if")  # a literal start: 14x faster than `^` in MULTILINE
_DIRECTIVE_LINE = re.compile(rb"[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b[^\n]*\n")
# zlib's inflate(): `if (!(state->wrap & 1) ||\n#else\n if (\n#endif\n ((BITS(8) ..)) {`, and the
# common `#ifdef X\n if (a) {\n#else\n if (b) {\n#endif`: a conditional whose branches each
# leave a parenthesis or a brace open. Left in, tree-sitter lost the function there and every
# one after it in the file (twelve of zlib's). A compiler reads one branch: so does the parse, the
# first (the `#else` of an `#if 0`); the other branches' comments, strings and names are still
# read from their text (cpp.py). Only where every branch leaves the same count open, and none
# holds another conditional.
# Where every branch ends inside an expression or a declaration, balanced or not: Vim's
# `#ifdef MESSAGE_QUEUE\n did_decrement =\n#else\n (void)\n#endif\n win_enter_ext(..);`, two
# heads before one body (`#if A\nstatic int f(void)\n#else\nstatic int f(int x)\n#endif\n{`),
# `#ifdef X\n if (a)\n#else\n if (b)\n#endif\n foo();`. An operator or a parenthesis ends it.
_OPEN_ENDS = frozenset(bytes([c]) for c in b"=|&+-*/?<>!()")
_HEAD_NAME = re.compile(rb"([A-Za-z_]\w*)[ \t]*\(")
# `struct _packed_ header {` (systemd), `struct __packed pucan_command {` (the kernel): words
# that start with `_` between the keyword and the name a `{` follows are attributes (no record
# has two names; C++'s `struct addrinfo hints{};` is a variable, and its type no `_` word),
# blanked, else tree-sitter reads a function `header` returning `struct _packed_`. Also with
# arguments, and FFmpeg's `attribute_` words: CUDA's `typedef struct __device_builtin__
# __align__(2) uchar2\n{` (FFmpeg's compat/cuda lost 8 vector types), `struct
# attribute_deprecated xvmc_pix_fmt {`.
_RECORD_ATTRIBUTE = re.compile(
    rb"\b(?:struct|union)[ \t]+((?:(?:_\w*|attribute_\w+)(?:[ \t]*\([^()\n]*\))?[ \t]+)+)"
    rb"(?=(?!final\b)[A-Za-z_]\w*\s*\{)"
)
# `offsetof(conf_t, upstream.timeout)`: tree-sitter's offsetof takes one member's name; the
# path after it is blanked (nginx's command tables were lost with their variables).
_OFFSETOF_PATH = re.compile(
    rb"\boffsetof[ \t]*\([^(),;{}]*,[ \t]*[A-Za-z_]\w*"
    rb"((?:[ \t]*(?:\.|->)[ \t]*[A-Za-z_]\w*|[ \t]*\[[^\[\]();{}]*\])+)[ \t]*\)"
)
# `MACRO(` at a line's start, then a function head: a word, more words or `*`, a name, `(`.
_DECLARATION_WRAPPER = re.compile(  # capnproto's `static KJ_ALWAYS_INLINE(void f(..)) {` too
    rb"\n[ \t]*(?=[A-Zsivcef])(?:(?:static|inline|virtual|constexpr|explicit|friend)[ \t]+)*"
    rb"([A-Z][A-Z0-9_]*)[ \t]*\((?=\s*(?:[A-Za-z_][\w:]*(?:<[^<>;{}()\n]*>)?[ \t*&]+)+"
    rb"[A-Za-z_]\w*[ \t]*\()",  # words, `ElementCountN<29>`, then the name and its `(`
)  # `\n` first, not `^`: a literal prefix lets the scan skip from line to line
_C_TYPE_WORD = re.compile(
    rb"\b(?:void|char|short|int|long|unsigned|signed|float|double|size_t|bool)\b|\*"
)
_RECORD_WORDS = frozenset(b"final class struct union enum typedef const volatile".split())
_BODY_AFTER = re.compile(rb"[ \t]*(?:\r?\n[ \t]*)?\{")
_NESTED_PARENTHESES = re.compile(rb"\([^()]*(?:\([^()]*\)[^()]*)*\)")
_DIRECTIVE_LINES = re.compile(rb"^[ \t]*#(?:[^\\\n]|\\(?:\r?\n|.))*", re.MULTILINE)
_LINE_COMMENTS = re.compile(rb"//.*|/\*.*?\*/")
_ELSE_DIRECTIVE = re.compile(rb"#[ \t]*el")
_SIMPLE_CONDITION = re.compile(  # `#ifdef X`, `#ifndef X`, `#if defined(X)`, `#if !defined X`
    rb"#[ \t]*(?:(ifn?def)[ \t]+(\w+)|if[ \t]+(!?)[ \t]*defined[ \t]*\(?[ \t]*(\w+)[ \t]*\)?)"
    rb"[ \t]*(?://[^\n]*|/\*[^\n]*\*/)?[ \t]*\r?\Z"
)
_OPEN_STATEMENT = re.compile(  # a statement's head, its body on the next line; or a label
    rb"(?:(?:\}[ \t]*)?(?:else(?:[ \t]+if[ \t]*\(.*\))?|(?:if|for|while|switch)[ \t]*\(.*\))"
    rb"|[A-Za-z_]\w*[ \t]*:(?!:))[ \t]*(?://[^\n]*|/\*[^\n]*\*/)?"
)
_IF_ZERO = re.compile(rb"[ \t]*#[ \t]*if[ \t]+0[ \t]*(?:$|/)")
_BALANCE_TOKEN = re.compile(  # directive lines (`#define BEGIN {`) count for nothing
    rb"/\*.*?(?:\*/|\Z)|//[^\n]*|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
    rb"|^[ \t]*#(?:[^\\\n]|\\(?:\r?\n|.))*|([(){}])",
    re.DOTALL | re.MULTILINE,
)
# Keywords of both C and C++: never a name, though a broken parse may capture them as one.
NOT_MACROS = frozenset(
    b"if while for switch return sizeof defined __attribute__ __declspec alignas".split()
)
_KR_PARAMETERS = re.compile(rb"\s*(?:[A-Za-z_]\w*\s*(?:,\s*[A-Za-z_]\w*\s*)*)?")
_LINE_END = re.compile(rb"[ \t]*(?:\n|//|/\*|\Z)")
# C headers' C++ guard: `extern "C" {` and its `}`, each alone in an `#ifdef __cplusplus`.
# Braces that open in one `#if` and close in another defeat tree-sitter (xxhash.h became one
# ERROR from its guard to its end); the declarations between are the header's either way.
# CPython's `Py_BEGIN_ALLOW_THREADS` / `Py_END_ALLOW_THREADS`: a macro alone on an indented line,
# with no `;`, between statements, or before a statement keyword on its line (as clang-format
# leaves `Py_END_ALLOW_THREADS if (x) {`). Left in, that is a function named `if`.
# _statement_macros checks what is around it. One regex for both, one try per line; the name
# starts with a capital or `_`, as macros' do, which fails most lines at their first letter.
_LONE_MACRO = re.compile(
    rb"\n[ \t]+([A-Z_]\w*)(?:[ \t]*(?=\n|//|/\*)"
    rb"|[ \t]+(?=(?:if|for|while|switch|return|goto)[ \t]*[(;\w]))"
)
# `if TOML_UNLIKELY(n == 0) {`: a macro that wraps the condition of an `if` or a `while` (a
# name after those keywords is always one; `if constexpr` is a keyword). Left in, tree-sitter-cpp
# ended tomlplusplus' `utf8_reader::read_next_block` at the second and made the rest a method
# named `TOML_UNLIKELY`. The name is blanked, its parentheses stay the condition's.
# (one pattern per keyword: a literal start is 6x quicker to scan for than `\b(?:if|while)`)
_CONDITION_MACROS = tuple(
    re.compile(keyword + rb"[ \t]+([A-Za-z_]\w*)[ \t]*(?=\()") for keyword in (b"if", b"while")
)
# `RETURN_CASE(ACAMERA_OK)` alone on an indented line, no `;`: a macro that expands to whole
# statements (`case x: return "x";`). A run of them in a switch made FFmpeg's android_camera.c
# one error from there to line 869: two functions lost (see _statement_calls).
_LONE_CALL = re.compile(
    rb"\n[ \t]+([A-Z][A-Z0-9_]*[ \t]*\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\))[ \t]*(?=\r?\n|//|/\*)"
)
_STATEMENT_START = re.compile(
    rb"\}|(?:if|for|while|do|switch|return|goto|break|continue)\b"
    rb"|[A-Za-z_]\w*[ \t]*(?:\(|->|\.|\[|\+\+|--|=(?!=))"
)
_LONE_CAPITALS = re.compile(rb"[A-Z][A-Z0-9_]*_[A-Z0-9_]*[ \t]*\r?")  # `QT_END_NAMESPACE`
_CASE_LABEL = re.compile(rb"(?:case\b|default[ \t]*:)")
_NOT_NEWLINE = re.compile(rb"[^\n]")
_CPLUSPLUS_GUARD = re.compile(
    rb"__cplusplus[^\n]*\n[ \t]*(extern[ \t]+\"C\"[ \t]*\n?[ \t]*\{|\})[ \t]*"
    rb"(?://[^\n]*|/\*[^\n]*\*/[ \t]*)?\n[ \t]*#[ \t]*endif"
)
# A `#define` continued over lines: a block comment in its body ends it for tree-sitter, and the
# lines after leak out as file-scope declarations (libuv's `int x; /* c */ \`). Comments on one
# line in such a body are blanked; cpp.py still reads them from the body's text.
_DEFINE_NAME = re.compile(rb"#[ \t]*define[ \t]+\w+(?:\([^)\n]*\))?")
_CONTINUED_DEFINE = re.compile(rb"#[ \t]*define[ \t]+[^\n]*\\\r?\n(?:[^\n]*\\\r?\n)*[^\n]*")
_RECORD_HEAD = re.compile(rb"\b(?:struct|union|class)\b")
_HEAD = re.compile(rb"[^;{}()=]{0,300}")  # a declaration's text up to its first `(`
_TEMPLATE_ARGUMENTS = re.compile(rb"<[^<>]*>")
# One type as a macro's argument (`int`, `const char *`, `yaml_parser_t *`): no list of them.
_TYPE_ARGUMENT = re.compile(
    rb"[ \t]*(?:(?:const|volatile|unsigned|signed|struct|enum|union)[ \t]+){0,3}"
    rb"[A-Za-z_]\w{0,80}(?:[ \t]*\*){0,3}[ \t]*"
)
_BARE_DECLARATOR = re.compile(rb"[A-Za-z_]\w*[ \t]*\([ \t]*\w+[ \t]*\)[ \t]*\(")
_CAPITALS = re.compile(rb"[A-Z][A-Z0-9_]*")
_CAPITALS_END = re.compile(rb"\b[A-Z][A-Z0-9_]*[ \t]*\Z")
# `(name) (`, and a function pointer's `(*name)(` (redis' `REDISMODULE_API size_t (*X)(..)`)
_PARENTHESIZED_NAME = re.compile(rb"\([ \t*&^]*[A-Za-z_]\w*[ \t]*\)[ \t]*\(")
# A variable's type and name, then its `=`, `;` or `[` (`fail_func_t g_fail = nullptr;`,
# `std::vector<int> *v;`): one type, one name, no list of them.
_TYPED_VARIABLE = re.compile(
    rb"\s*[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*(?:\s*<[^<>;{}()=]*>)?(?:\s*[*&]+\s*|\s+)"
    rb"[A-Za-z_]\w*\s*[=;\[]"
)
_QUALIFIED_NAME = re.compile(rb"~?[A-Za-z_]\w*(?:\s*::\s*~?[A-Za-z_]\w*)*")
# A small lexer for text tree-sitter leaves unread: `#define` bodies, `#pragma`/`#error`
# arguments (preproc_arg), and ERROR nodes, where recovery can split a literal into tokens.
TOKEN = re.compile(
    rb"(?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))"
    rb'|(?P<string>(?:u8|[uUL])?R"(?P<delimiter>[^()\\\s]{0,16})\(.*?\)(?P=delimiter)"'
    rb'|(?:u8|[uUL])?"(?:[^"\\\n]|\\.)*"?)'
    rb"|(?P<char>(?:u8|[uUL])?'(?:[^'\\\n]|\\.)*'?)"
    rb"|(?P<number>\.?\d(?:[\w.]|'\w|[eEpP][+-])*)"
    rb"|(?P<name>[A-Za-z_]\w*)",
    re.DOTALL,
)


Spans = list[tuple[int, int]]
# A K&R definition whose return type is a pointer (`table*\ninit_table(type, size)\n int type;
# ..{`, zlib's `const char * ZEXPORT zError(err)`): tree-sitter-c reads K&R parameters only after
# a plain declarator, and took the head for a declaration, its span ending at the parameters
# (13 functions in oniguruma's st.c and tcl's zlib). The `*`s are blanked for the parse; the
# signature is the source's.
_KR_POINTER_HEAD = re.compile(
    rb"^[A-Za-z_][\w \t]*?[ \t]*((?:\*[ \t\n]*)+)(?:[A-Z][A-Z0-9_]*[ \t]+)?[A-Za-z_]\w*[ \t]*"
    rb"\([ \t]*[A-Za-z_]\w*(?:[ \t]*,[ \t]*[A-Za-z_]\w*)*[ \t]*\)[ \t]*\n"
    rb"(?:[ \t]*[A-Za-z_][^;{}()\n]*;[ \t]*\n)+[ \t]*\{",
    re.MULTILINE,
)
# The same inside a parameter list (curl's `void Curl_conncontrol(struct connectdata *conn,\n
# int ctrl\n#if defined(DEBUGBUILD)\n , const char *reason\n#endif\n )`): the function was lost
# and its locals read as the file's. The two directive lines are blanked when the code before
# the `#if` (since the last `;` or brace) leaves a parenthesis open; the parameters between
# them are kept.
# (Each of these scans starts at a literal, `#` or `else`, and checks the line start after: a
# pattern that starts at `^` is tried at every line of every file.)
_CONDITIONAL_IN_PARAMETERS = re.compile(
    _IF_LINE + rb"\n" + _CODE_LINES % 4 + rb"(" + _ENDIF_LINE + rb")\n"
)
_OPEN_HEAD = re.compile(rb"[A-Za-z_]\w*[ \t]*\(")
# An `#if` .. `#endif` (no `#else`) that holds a link of an if-else chain: curl's `if(result)\n
# failf(..);\n#ifdef USE_WEBSOCKETS\n else if(ws)\n setup(..);\n#endif\n else\n ..;` (it opens
# with `else`) and `#ifndef USE_HYPER\n if(a) {..}\n else\n#endif\n {..}` (it ends with one).
# tree-sitter takes no directive inside a chain: the function was lost, and with it the next
# (curl's http.c: Curl_http_bodysend, Curl_http_cookies). The two directive lines are blanked;
# the chain is read whole.
_CONDITIONAL_LINE = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b[^\n]*", re.M)
_IF_OPENING_ELSE = re.compile(_IF_LINE + rb"\n[ \t]*else\b")
_ELSE_BEFORE_ENDIF = re.compile(
    rb"else[ \t]*(?:/\*[^\n]*?\*/[ \t]*|//[^\n]*)?\n(" + _ENDIF_LINE + rb")"
)
# A conditional link of a member-access chain: cpp-httplib's tests' `svr_.Get("/a", ..)\n#if 0\n
# .Post("/b", ..)\n#endif\n .Get("/c", ..);` (its first code a `.` or `->` link, after code that
# ends an operand). tree-sitter takes no directive inside an expression: the method, and every
# member of its class after it, were lost (ServerTest's SetUp, svr_). The two directive lines are
# blanked, and the code between them too under an `#if 0`, which no compiler reads; the chain is
# read whole. Only an `#if` .. `#endif` (with an `#else`, _split_conditionals keeps one branch)
# whose code closes what it opens.
_IF_BEFORE_LINK = re.compile(_IF_LINE + rb"\n[ \t]*(?:\.(?![.\d])|->)[ \t]*[A-Za-z_~]")
# Qt's `class\n#if QT_VERSION < QT_VERSION_CHECK(6, 0, 0)\nQ_CORE_EXPORT\n#endif\nQByteRef {`: an
# export macro under a conditional between a record's keyword and its name. The directive lines
# and the macro are blanked (QByteRef and QCharRef were lost with every member).
_CONDITIONAL_RECORD_EXPORT = re.compile(
    rb"(?:class|struct|union)[ \t]*\n([ \t]*" + _IF_LINE + rb")\n"
    rb"([ \t]*[A-Z][A-Z0-9]*_[A-Z0-9_]*[ \t]*)\n(" + _ENDIF_LINE + rb")\n"
    rb"(?=[ \t]*[A-Za-z_]\w*[ \t]*(?:[:{]|//|/\*|\n))"
)
# `#if __has_include(<nss3/nss.h>)`: tree-sitter reads no `<header>` in an expression, and its
# recovery took the next line (lighttpd's `#define NSS_VER_INCLUDE` was lost). The `<..>` is
# blanked: `__has_include(  ..  )` is a call it reads.
_HAS_INCLUDE_HEADER = re.compile(rb"__has_include(?:_next)?[ \t]*\([ \t]*(<[^<>()\n]*>)")
# gnulib's `.in.h` templates (copied into gzip, nano and most GNU trees): an autoconf
# placeholder in a condition, `#if @GNULIB_GETOPT_POSIX@`, is no expression to tree-sitter, and
# the `#define`s of that branch were lost (38 in gzip and nano). Its `@`s are blanked: the
# condition names a macro.
_PLACEHOLDER_CONDITION = re.compile(rb"^[ \t]*#[ \t]*(?:el)?if\b[^\n]*@[A-Za-z_]\w*@", re.M)
_PLACEHOLDER = re.compile(rb"@[A-Za-z_]\w*@")
# Directive lines between a function's head and its body (gnulib's `fcntl (int fd, ..)\n#undef
# fcntl\n#ifdef __KLIBC__\n# define fcntl klibc_fcntl\n#endif\n{`): the function ended at its head
# and its locals were read as the file's. They are left out of the parse (read from the text).
_DIRECTIVES_BEFORE_BODY = re.compile(
    rb"\)[ \t]*\r?\n((?:[ \t]*#(?:[^\\\n]|\\(?:\r?\n|.))*\r?\n)+)(?=[ \t]*\{)"
)


def blank_macros(source: bytes, lang: str) -> tuple[bytes, Spans, Spans]:
    """`source` with the macros that hide declarations replaced by spaces (offsets kept): the
    export macro of `class MACRO Name {`, and runs in declaration position (_macro_spans,
    returned too: their names stay references, as they were when tree-sitter read them), and
    the branches of a conditional the parse does not read (returned third: their comments,
    strings and names are read from the text)."""
    unread = _split_conditionals(source) if _ELSE_DIRECTIVE.search(source) else []
    if unread or _ELSE_DIRECTIVE.search(source):
        unread += [
            span
            for span in _conditions_kept_consistent(source)
            if not any(a <= span[0] < b for a, b in unread)
        ]
    if b"endif" in source:  # not inside a branch left unread already (read once)
        unread += [
            (start, end)
            for start, end in _conditionals_in_heads(source)
            + _conditionals_in_parameters(source)
            + (_conditionals_in_else_chains(source) if b"else" in source else [])
            + (_conditionals_closing_records(source) if lang == "cpp" and b"};" in source else [])
            + _conditional_record_exports(source)
            + _conditionals_around_bodies(source)
            + _conditionals_splitting_blocks(source)
            + _conditional_attributes(source)
            if not any(a <= start < b for a, b in unread)
        ]
        # after the others: a link inside a call's parentheses may be theirs already
        unread += [
            span
            for span in _conditionals_in_chains(source)
            if not any(a <= span[0] < b for a, b in unread)
        ]
    if b"(" in source:
        unread += [
            span
            for span in _statement_arguments(source, lang)
            if not any(a <= span[0] < b for a, b in unread)
        ]
    if b"#" in source:
        unread += [
            span
            for span in _directives_before_bodies(source)
            if not any(a <= span[0] < b for a, b in unread)
        ]
    spans = list(unread)
    # The other scans read the code the parse reads: coreutils' `f(..)\n#if X\n  ATTR((..))\n
    # #else\n  ATTR((..))\n#endif\n ;` is a trailing macro once one branch is left.
    source = _blanked(source, unread) if unread else source
    x_macro_calls: Spans = []
    if b"define" in source or b"undef" in source:
        inside, x_macro_calls = _directives_in_bodies(source)
        spans += inside
        unread += inside
    spans += [m.span(1) for pattern in _EXPORT_MACROS for m in pattern.finditer(source)]
    if lang == "cpp":
        spans += [
            m.span(1)
            for pattern in _LOWER_EXPORT_MACROS
            for m in pattern.finditer(source)
            if _not_keywords(m[1]) and not _is_word_byte(source, m.start() - 1)
        ]
    if b"enum" in source:
        spans += _enum_macros(source, lang)
    if lang == "cpp":
        spans += _after_name_macros(source)
        if any(word in source for word in _LOWER_SPECIFIER_WORDS):
            # the leading scan wants a line's `\n` before it: the file's first line has one
            spans += [
                (m.start(1) - 1, m.end(1) - 1)
                for m in _LEADING_LOWER_SPECIFIER.finditer(b"\n" + source)
            ]
            spans += [m.span(1) for m in _TRAILING_LOWER_SPECIFIER.finditer(source)]
    spans += [m.span(1) for m in _POINTER_MACRO.finditer(source)]
    spans += [m.span(1) for m in _RECORD_ATTRIBUTE.finditer(source) if _not_keywords(m[1])]
    if b"offsetof" in source:
        spans += [m.span(1) for m in _OFFSETOF_PATH.finditer(source)]
    spans += [m.span(1) for m in _CPLUSPLUS_GUARD.finditer(source)]
    if b"__has_include" in source:
        spans += [m.span(1) for m in _HAS_INCLUDE_HEADER.finditer(source)]
    if b"@" in source:
        spans += [
            (at, at + 1)
            for line in _PLACEHOLDER_CONDITION.finditer(source)
            for m in _PLACEHOLDER.finditer(source, line.start(), source.find(b"\n", line.end()))
            for at in (m.start(), m.end() - 1)
        ]
    if lang == "c" and b"*" in source:
        spans += [
            (m.start(1) + at, m.start(1) + at + 1)
            for m in _KR_POINTER_HEAD.finditer(source)
            for at, byte in enumerate(m[1])
            if byte == ord("*")
        ]
    spans += [m.span(1) for m in _NAME_PARENTHESES_MACRO.finditer(source)]
    spans += _return_type_attributes(source)
    if any(word in source for word in _CALLING_CONVENTIONS):
        spans += _calling_conventions(source)
    if b"typedef" in source:
        spans += [
            m.span(1)
            for pattern in (
                _TYPEDEF_CALL_MACROS,
                _TYPEDEF_ATTRIBUTE,
                _TYPEDEF_NAME_ATTRIBUTE,
                _TYPEDEF_NAME_CALL,
            )
            for m in pattern.finditer(source)
            if not _is_word_byte(source, m.start() - 1)
        ]
        spans += [
            span
            for m in _TYPEDEF_NAME_MACRO.finditer(source)
            if not _is_word_byte(source, m.start() - 1)
            for span in (m.span(1), m.span(2))
        ]
        if b"define" in source:
            spans += _typedef_defined_macros(source)
    if b"\\\n" in source or b"\\\r\n" in source:
        for define in _CONTINUED_DEFINE.finditer(source):
            if b"/*" in define[0]:
                spans += _define_comments(source, define.start(), define.end())
    if b"/*" in source:
        spans += _one_line_define_comments(source)
    macro_spans = _macro_spans(source, lang) + _call_lines(source) + _statement_macros(source)
    macro_spans += [
        m.span(1)
        for pattern in _CONDITION_MACROS
        for m in pattern.finditer(source)
        if m[1] not in KEYWORDS
        and not _is_word_byte(source, m.start() - 1)  # `elif`, `endif`
        and not on_directive_line(source, m.start())  # `#if X(5, 15)`
    ]
    if b")\n" in source or b")\r\n" in source:
        macro_spans += _statement_calls(source)
    macro_spans += x_macro_calls
    macro_spans += _trailing_macros(source) + _parameter_macros(source)
    if b"((" in source:
        macro_spans += _prototype_wrappers(source)
        macros, lists = _arguments_macros(source)
        macro_spans += macros
        spans += lists
    macro_spans += _attributes_before_name(source)
    if b"void" in source:
        macro_spans += _macros_before_void_functions(source)
    macro_spans += _declaration_wrappers(source)
    macro_spans += _line_start_spans(_STORAGE_MACRO, source)
    macro_spans += _line_start_spans(_LONE_MACRO_BEFORE_TYPE_MACRO, source)
    macro_spans += _record_attributes(source)
    if b"}" in source:
        macro_spans += _record_capitals(source) + _record_macros_before_names(source)
    if b"=\n" in source or b"= \n" in source:
        macro_spans += [
            m.span(1)
            for m in _STRING_MACRO_RUN.finditer(source)
            if not on_directive_line(source, m.start())
        ]

    if b"(=" in source:
        macro_spans += _initializer_macros(source)
    keywords: list[re.Match[bytes]] = []
    records: list[re.Match[bytes]] = []
    if lang == "cpp":
        spans += [m.span(1) for m in _ACCESS_MACRO.finditer(source)]
        macro_spans += _annotations(source)
        macro_spans += [m.span(1) for m in _MID_MACRO.finditer(source)]
        called = _call_statements(source)  # blanked, their strings read from the text
        spans += called
        unread += called
        if b"_TRY" in source:
            found = list(_EXCEPTION_MACROS.finditer(source))
            keywords = _paired(source, found)
            macro_spans += [m.span(1) for m in keywords]
            macro_spans += [m.span(1) for m in found if m[2] == b"_CATCH_END"]
        if b"#" in source:
            inner, inner_unread = _inner_conditionals(source)
            spans += inner
            unread += inner_unread
        if b"_STRUCT" in source or b"_CLASS" in source:
            records = list(_RECORD_MACRO.finditer(source))
            spans += [m.span(3) for m in records if m.end(3) > m.start(3)]
            keywords += records
    friends = _specifiers_before_friend(source) if lang == "cpp" and b"friend" in source else []
    empty = _empty_defines(source) if b"define" in source else []
    ifs = _macro_ifs(source) if b"else" in source else []
    spans += _empty_last_arguments(source)
    if not spans and not macro_spans and not keywords and not friends and not empty and not ifs:
        return source, macro_spans, unread
    blanked = bytearray(_blanked(source, spans + macro_spans + [m.span(1) for m in records]))
    for at in empty:  # the line's last blank, unless the line was blanked
        if blanked[at] in b" \t\r" and not _blank_line_before(blanked, at):
            blanked[at] = ord(";")
    for start, end, specifier, gap in friends:  # `inline friend` -> `friend inline`
        blanked[start:end] = b"friend" + gap + specifier
    for keyword in keywords:  # `BOOST_TRY {` -> `try       {`, `BOOST_CATCH(...)` -> `catch`
        start, end = keyword.span(1)
        word = _keyword(keyword[2])  # STRUCT -> struct
        blanked[start:end] = word + b" " * (end - start - len(word))
    for start, end in ifs:
        blanked[start:end] = b"if" + b" " * (end - start - 2)
    return bytes(blanked), macro_spans + ifs, unread


def _empty_defines(source: bytes) -> list[int]:
    """The offset of the last blank of each line _EMPTY_DEFINE matches."""
    found = []
    for blank in (b" \n", b"\t\n"):
        at = source.find(blank)
        while at >= 0:
            start = source.rfind(b"\n", 0, at) + 1
            line = _EMPTY_DEFINE.match(source, start, at + 2)
            if line is not None and line.end() == at + 2:
                found.append(at)
            at = source.find(blank, at + 2)
    return found


def _blank_line_before(blanked: bytearray, at: int) -> bool:
    """Whether the line that `at` ends holds nothing but blanks now (its `#define` blanked)."""
    start = blanked.rfind(b"\n", 0, at) + 1
    return not blanked[start:at].strip()


def _enum_macros(source: bytes, lang: str) -> Spans:
    """The macros _ENUM_EXPORT_MACRO and the attributes _ENUM_ATTRIBUTE find, and in C++ the bases (and macros standing for them)
    of _ANONYMOUS_ENUM_BASE and _ENUM_BASE_MACRO."""
    spans = [
        m.span(1)
        for pattern in (_ENUM_EXPORT_MACRO, _ENUM_ATTRIBUTE)
        for m in pattern.finditer(source)
        if not _is_word_byte(source, m.start() - 1)
    ]
    if lang != "cpp":
        return spans
    spans += [
        m.span(1)
        for m in _ANONYMOUS_ENUM_BASE.finditer(source)
        if not _is_word_byte(source, m.start() - 1)
    ]
    for m in _ENUM_BASE_MACRO.finditer(source):
        if _is_word_byte(source, m.start() - 1):
            continue
        name = source[m.start() : m.start(1)].split()[-1]
        if not _EXPORT_LIKE.fullmatch(name):  # `enum MYLIB_API STATUS_CODE {`: the first
            spans.append(m.span(1))
    return spans


def _macros_before_void_functions(source: bytes) -> Spans:
    """The macro of `TYPE MACRO name(void)` (_MACRO_BEFORE_NAME), outside directives."""
    spans: Spans = []
    for parameters in _VOID_PARAMETERS.finditer(source):
        start = max(0, parameters.start() - 200)
        found = _MACRO_BEFORE_NAME.search(source, start, parameters.start())
        if found is None or on_directive_line(source, found.start(2)):
            continue
        if found[1] in _NOT_RETURN_TYPES or _EXPORT_LIKE.fullmatch(found[1]):
            # `return FOO_BAR baz(void)` is no declaration; after a specifier, `struct` or an
            # export macro the capitals are the return type (`static CRITICAL_SECTION *\nf
            # (void)`, `struct FOO_BAR *f(void)`, `OPENSSL_EXPORT EVP_MD_CTX *EVP_MD_CTX_new(void)`).
            continue
        line_start = source.rfind(b"\n", 0, found.start(1)) + 1
        if _NOT_CODE_LINE.match(source, line_start, found.start(1) + 1):
            continue  # the word is no return type: `#endif`, a comment's last word
        spans.append(found.span(2))
    return spans


_NOT_RETURN_TYPES = frozenset(
    b"return case goto else do sizeof static extern inline __inline __inline__ register typedef "
    b"const volatile auto _Noreturn constexpr virtual friend explicit struct enum union class".split()
)
_NOT_CODE_LINE = re.compile(rb"[ \t]*(?:#|//|/\*|\*)")


def _directive_line_start(source: bytes, start: int) -> int:
    """Where the line of the `#` at `start` begins; -1 when code stands before it on its line
    (a `#` inside a line is no directive)."""
    line_start = source.rfind(b"\n", 0, start) + 1
    return -1 if source[line_start:start].strip(b" \t") else line_start


def _at_line_starts(
    pattern: re.Pattern[bytes], source: bytes
) -> Iterator[tuple[re.Match[bytes], int]]:
    """Each match of `pattern` (a directive's `#` first) that starts a line, with its line's
    start."""
    for found in pattern.finditer(source):
        line_start = _directive_line_start(source, found.start())
        if line_start >= 0:
            yield found, line_start


def _conditionals_in_heads(source: bytes) -> Spans:
    """The directive lines of each _CONDITIONAL_IN_HEAD: after a line that ends a return type
    (a word or `*`, no directive), around words with no `;`, brace or `=` and balanced `()`."""
    spans: Spans = []
    for found, line_start in _at_line_starts(_CONDITIONAL_IN_HEAD, source):
        before = source[max(0, line_start - 200) : line_start].rstrip()
        previous = before.rsplit(b"\n", 1)[-1].strip()
        ends_a_type = _is_word_byte(before, len(before) - 1) or previous.endswith(b"*")
        if not previous or previous.startswith((b"#", b"/*", b"*", b"//")) or not ends_a_type:
            continue
        inner = found[1]
        if any(c in inner for c in b";{}=") or inner.count(b"(") != inner.count(b")"):
            continue
        spans += [(line_start, found.start(1) - 1), found.span(2)]
    return spans


def _conditionals_in_parameters(source: bytes) -> Spans:
    """The directive lines of each _CONDITIONAL_IN_PARAMETERS whose lines hold no `;` or brace
    and balanced `()`, after code that opened a parenthesis (a name and `(`) and closed none
    of it since the last `;` or brace, with no directive line in between."""
    spans: Spans = []
    for found, line_start in _at_line_starts(_CONDITIONAL_IN_PARAMETERS, source):
        inner = found[1]
        if any(c in inner for c in b";{}") or inner.count(b"(") != inner.count(b")"):
            continue
        window = source[max(0, found.start() - 2000) : found.start()]
        head = window[max(window.rfind(b";"), window.rfind(b"{"), window.rfind(b"}")) + 1 :]
        if head.count(b"(") <= head.count(b")") or not _OPEN_HEAD.search(head):
            continue
        if any(line.lstrip().startswith(b"#") for line in head.split(b"\n")):
            continue
        spans += [(line_start, found.start(1) - 1), found.span(2)]
    return spans


def _conditionals_in_chains(source: bytes) -> Spans:
    """The directive lines of each _IF_BEFORE_LINK after an operand's end (a `)`, a `]` or a
    name), up to the `#endif` that is the next directive, its code closing every parenthesis
    and brace it opens; under an `#if 0`, its code too."""
    spans: Spans = []
    for found, line_start in _at_line_starts(_IF_BEFORE_LINK, source):
        before = _previous_significant(source, line_start)
        if before not in (b")", b"]") and not (before.isalnum() or before == b"_"):
            continue
        line_end = source.index(b"\n", found.start())
        closing = _CONDITIONAL_LINE.search(source, line_end + 1)
        if closing is None or closing[1] != b"endif":
            continue
        if _balance(source, line_end + 1, closing.start()) != (0, 0):
            continue
        spans += [(line_start, line_end), closing.span()]
        if _IF_ZERO.match(source, line_start):
            spans.append((line_end + 1, closing.start()))
    return spans


def _conditional_record_exports(source: bytes) -> Spans:
    """The directive lines and the macro of each _CONDITIONAL_RECORD_EXPORT whose keyword
    starts its line."""
    return [
        span
        for found in _CONDITIONAL_RECORD_EXPORT.finditer(source)
        if not source[source.rfind(b"\n", 0, found.start()) + 1 : found.start()].strip(b" \t")
        for span in (found.span(1), found.span(2), found.span(3))
    ]


def _conditionals_in_else_chains(source: bytes) -> Spans:
    """The directive lines of each conditional link of an if-else chain: an `#if` whose first
    line is an `else` (_IF_OPENING_ELSE; not right after another directive's line: blanked
    alone, the recovery from the `#define` above it read less of the function), or an `#endif`
    right after an `else` first on its line (_ELSE_BEFORE_ENDIF), with its other end the next
    (or the last) conditional directive and none between them."""
    spans: Spans = []
    for found, line_start in _at_line_starts(_IF_OPENING_ELSE, source):
        if _continues_directive(source, line_start):
            continue  # a `#define`'s body
        if line_start and on_directive_line(source, line_start - 1):
            continue  # psutil's `#define X ..` then `#if ..\n else if`: the chain stays broken
        if _if_in_a_conditional(source, line_start):
            continue
        line_end = source.index(b"\n", found.start())
        closing = _CONDITIONAL_LINE.search(source, line_end + 1)
        if closing is None or closing[1] != b"endif":
            continue
        spans += [(line_start, line_end), closing.span()]
    for found in _ELSE_BEFORE_ENDIF.finditer(source):
        before = source[source.rfind(b"\n", 0, found.start()) + 1 : found.start()]
        if before.strip(b" \t") not in (b"", b"}"):
            continue  # `else` is no word of its own here, or not the first on its line
        opening = _last_conditional_line(source, found.start(), 20_000)
        if opening is None or not opening[1].startswith(b"if"):
            continue
        spans += [opening.span(), found.span(1)]
    return spans


def _conditionals_closing_records(source: bytes) -> Spans:
    """The `#if` and `#endif` lines of each conditional with no `#else` that closes a record
    it did not open and goes on past it (_closes_a_record): Qt's `#ifndef Q_QDOC\nprivate:\n  X *self();\n};\n
    inline X *Y::self() {..}\n..#endif` (40 of QtCore's headers hide a private part from qdoc so).
    tree-sitter lost every definition from the `};` to the `#endif` (qstringlist.h: 40). Blanked,
    the code reads as a compiler reads it where the condition holds."""
    return [
        line
        for lines in _conditional_groups(source)
        if len(lines) == 2 and _closes_a_record(source, lines[0][1], lines[1][0])
        for line in lines
    ]


def _conditionals_splitting_blocks(source: bytes) -> Spans:
    """The `#if` and `#endif` lines of each conditional with no `#else` whose code opens a
    brace it does not close, or closes one it did not open: jq's dtoa, `#ifndef X\n if (L > 0)
    {\n#endif\n ..\n#ifndef X\n }\n else {..}\n#endif`, a block split over two conditionals
    of one condition. tree-sitter lost the function and every one after it to the file's end
    (`jvp_dtoa`, 700 lines, and two more). Blanked, the code reads as a compiler reads it where
    the condition holds. Not `#if 0`, whose code no compiler reads."""
    return [
        line
        for lines in _conditional_groups(source)
        if len(lines) == 2
        and not _IF_ZERO.match(source, lines[0][0])
        and (
            _splits_a_block(source, lines[0][1], lines[1][0])
            or _ends_open(source, lines[0][1], lines[1][0])
        )
        for line in lines
    ]


def _conditional_groups(source: bytes) -> list[list[tuple[int, int]]]:
    """Each conditional's directive lines (`#if`, any `#elif` and `#else`, `#endif`; each
    line's start and end), in the order the conditionals end. A `#` inside a line is no
    directive; an `#endif` without its `#if` (a header cut in two) is left out."""
    groups: list[list[tuple[int, int]]] = []
    stack: list[list[tuple[int, int]]] = []
    for directive in CONDITIONAL_DIRECTIVE.finditer(source):
        line_start = _directive_line_start(source, directive.start())
        if line_start < 0:
            continue
        line_end = source.find(b"\n", directive.start())
        line = (line_start, len(source) if line_end < 0 else line_end)
        if directive[1].startswith(b"if"):
            stack.append([line])
        elif stack:
            stack[-1].append(line)
            if directive[1] == b"endif":
                groups.append(stack.pop())
    return groups


def _conditions_kept_consistent(source: bytes) -> Spans:
    """Where one macro's conditionals split a block between them: an `#ifdef X` .. `#else` ..
    `#endif` whose `#else` branch opens a brace its first branch does not, closed under a later
    `#ifndef X` (David Gay's dtoa.c, vendored in jq and many more: `#ifdef Avoid_Underflow ..
    #else .. if (!dval(&rv)) {\n#endif ..\n#ifndef Avoid_Underflow\n ..}\n#endif`).
    tree-sitter read neither, and lost the function and the next (jq's `jvp_strtod` ended 615
    lines early, `jvp_dtoa` was lost). Read as a compiler reads it with X as the first branch
    says: that branch kept, the `#else` branch and every later block-splitting conditional
    that X's value rules out left unread (the spans returned)."""
    groups: list[tuple[bytes, bool, list[tuple[int, int]]]] = []  # macro, if-defined, lines
    for lines in _conditional_groups(source):
        simple = _SIMPLE_CONDITION.match(source, source.find(b"#", *lines[0]), lines[0][1])
        if simple is not None and len(lines) <= 3:
            macro = simple[2] or simple[4]
            groups.append((macro, not (simple[1] == b"ifndef" or simple[3]), lines))
    groups.sort(key=lambda group: group[2][0])
    spans: Spans = []
    for at, (macro, defined, lines) in enumerate(groups):
        if len(lines) != 3:
            continue  # only an `#if` .. `#else` .. `#endif`
        (first, otherwise) = _branches(lines)
        skew = _brace_balance(source, *otherwise) - _brace_balance(source, *first)
        if not skew:
            continue
        for other_macro, other_defined, other in groups[at + 1 :]:
            if other[0][0] - lines[-1][1] > 50_000:
                break
            if other_macro != macro or len(other) != 2 or other_defined == defined:
                continue
            content = (other[0][1], other[1][0])
            if _brace_balance(source, *content) == -skew:  # the brace it closes
                spans += [*lines, otherwise, (other[0][0], other[1][1])]
                break
    return spans


def _splits_a_block(source: bytes, start: int, end: int) -> bool:
    return source.count(b"{", start, end) != source.count(b"}", start, end) and (
        _brace_balance(source, start, end) != 0
    )


def _ends_open(source: bytes, start: int, end: int) -> bool:
    """Whether the code between `start` and `end` ends with a statement's head and no body:
    jq's dtoa, `#ifdef Honor_FLT_ROUNDS\n if (bc->rounding == 1)\n#endif\n {..}`, or an `else`
    whose statement follows the `#endif`."""
    last = source.rfind(b"\n", start, end - 1) + 1
    return bool(_OPEN_STATEMENT.fullmatch(source[max(last, start) : end].strip()))


def _brace_balance(source: bytes, start: int, end: int) -> int:
    """The braces the code between `start` and `end` opens less those it closes (comments,
    strings and directive lines left out)."""
    balance = 0
    for token in _BALANCE_TOKEN.finditer(source, start, end):
        if token[1] == b"{":
            balance += 1
        elif token[1] == b"}":
            balance -= 1
    return balance


def _closes_a_record(source: bytes, start: int, end: int) -> bool:
    """Whether the code between `start` and `end` closes a brace it did not open, at a `};`,
    with more code after it: the definitions after the record (qstringlist.h's `self()`), or
    the head of the record qdoc is shown instead (`};\nclass QStringList : ..\n{`). Not C's
    `#ifdef __cplusplus\n}\n#endif`."""
    closing = source.find(b"};", start, end)
    if closing < 0 or 0 <= source.find(b"{", start, closing) < closing:
        return False  # most conditionals: no `};`, or a `{` before it (an include guard's)
    depth = 0
    for token in _BALANCE_TOKEN.finditer(source, start, end):
        bracket = token[1]
        if bracket == b"{":
            depth += 1
        elif bracket == b"}":
            depth -= 1
            if depth < 0:
                rest = source[token.end() : end].lstrip(b" \t")
                return rest.startswith(b";") and bool(rest[1:].strip())
    return False


def _last_conditional_line(source: bytes, at: int, window: int) -> re.Match[bytes] | None:
    """The last conditional directive's line (`#if` .. `#endif`) in the `window` bytes before
    `at`."""
    lines = list(_CONDITIONAL_LINE.finditer(source, max(0, at - window), at))
    return lines[-1] if lines else None


def _if_in_a_conditional(source: bytes, at: int) -> bool:
    """Whether the statement before the `#if` at `at` may begin inside a conditional of its
    own: an `#endif` ends the last conditional before it, with no brace between (libjpeg-turbo's
    `#ifndef X\n if (a)\n#endif\n return f();\n#ifndef X\n else\n return g();\n#endif`):
    the `else` there continues an `if` the parse cannot see whole either way."""
    last = _last_conditional_line(source, at, 4000)
    if last is None or last[1] != b"endif":
        return False
    between = source[last.end() : at]
    return b"{" not in between and b"}" not in between


def _directives_before_bodies(source: bytes) -> Spans:
    """The directive lines of each _DIRECTIVES_BEFORE_BODY after a line of code (not itself a
    directive's: `#define F(x)\n#define G\n{`) whose conditionals open and close among them (the
    `#endif` of LLVM's `#ifdef NDEBUG\n if (StartBit)\n#endif\n {` is no such run)."""
    spans: Spans = []
    for found in _DIRECTIVES_BEFORE_BODY.finditer(source):
        if on_directive_line(source, found.start()):
            continue
        depth = 0
        for directive in _DIRECTIVE_LINE.finditer(source, found.start(1), found.end(1)):
            word = directive[1]
            depth += 1 if word.startswith(b"if") else -1 if word == b"endif" else 0
            if depth < 0 or (depth == 0 and word.startswith(b"el")):
                break
        else:
            if depth == 0:
                spans.append((found.start(1), found.end(1) - 1))
    return spans


def _conditional_attributes(source: bytes) -> Spans:
    """The directive lines of each _CONDITIONAL_ATTRIBUTE (its `#if` at the start of a line)."""
    return [
        span
        for found, line_start in _at_line_starts(_CONDITIONAL_ATTRIBUTE, source)
        for span in ((line_start, source.index(b"\n", found.start())), found.span(1))
    ]


def _conditionals_around_bodies(source: bytes) -> Spans:
    """The `#if` and `#endif` lines around a record's body, between its head and its name
    (an `#if` line between a record's head line and its `{`: ncurses' `typedef struct pagenode\n#if !NCURSES_OPAQUE_FORM\n{..}
    \n#endif\n_PAGE;`). Left in, the struct and its typedef were lost and the members read as
    variables of the file; blanked, the body is read (the one an opaque build hides)."""
    spans: Spans = []
    for found in _IF_BEFORE_BRACE.finditer(source):
        head_start = source.rfind(b"\n", 0, found.start()) + 1
        if not _RECORD_HEAD_LINE.fullmatch(source, head_start, found.start()):
            continue
        depth, end = 0, min(len(source), found.end() + 20_000)
        for directive in _DIRECTIVE_LINE.finditer(source, found.end(), end):
            word = directive[1]
            if word.startswith(b"if"):
                depth += 1
            elif word == b"endif" and depth:
                depth -= 1
            elif word == b"endif":
                spans += [found.span(1), (directive.start(), directive.end() - 1)]
                break
            elif not depth:
                break  # an `#else` of its own: another shape
    return spans


def _calling_conventions(source: bytes) -> Spans:
    """`__stdcall`, `_cdecl` ... as words, outside directives (_CALLING_CONVENTIONS)."""
    spans: Spans = []
    for word in _CALLING_CONVENTIONS:
        at = source.find(word)
        while at >= 0:
            start = at - 2 if source[at - 2 : at] == b"__" else at - 1
            end = at + len(word)
            if (
                source[start : start + 1] == b"_"
                and not _is_word_byte(source, start - 1)
                and not _is_word_byte(source, end)
                and not on_directive_line(source, start)
            ):
                spans.append((start, end))
            at = source.find(word, end)
    return spans


def _is_word_byte(source: bytes, at: int) -> bool:
    return 0 <= at < len(source) and (source[at : at + 1].isalnum() or source[at] == 0x5F)


def _specifiers_before_friend(source: bytes) -> list[tuple[int, int, bytes, bytes]]:
    """From `inline` (or `constexpr`) to the end of the `friend` right after it: the span, the
    specifier and the blanks between the two words."""
    found = []
    for friend in _FRIEND.finditer(source):
        if _is_word_byte(source, friend.start() - 1):
            continue
        before = _SPECIFIER_BEFORE.search(source, max(0, friend.start() - 40), friend.start())
        if before is not None:
            found.append((before.start(), friend.end(), before[1], before[2]))
    return found


def _directives_in_bodies(source: bytes) -> tuple[Spans, Spans]:
    """The `#define` and `#undef` lines inside enum bodies and initializers (_ENUM_OPENING,
    _INITIALIZER_OPENING), and the enums' X-macro calls on lines of their own there. Bodies
    are taken in file order and one inside another is skipped, so each brace is matched once;
    an opening in a comment opens nothing."""
    openings = list(_INITIALIZER_OPENING.finditer(source))
    at = source.find(b"enum")
    while at >= 0:
        if not _is_word_byte(source, at - 1):
            enum = _ENUM_OPENING.match(source, at)
            if enum is not None:
                openings.append(enum)
        at = source.find(b"enum", at + 4)
    openings.sort(key=lambda body: body.start())
    directives: Spans = []
    calls: Spans = []
    done_until = 0  # the end of the last body matched: an opening before it is inside it
    next_close = -2  # the first `};` at or after the opening being looked at (-2: not searched)
    for body in openings:
        opening = body.end() - 1
        if opening < done_until:
            continue
        if next_close != -1 and next_close < opening:
            end = _BODY_END.search(source, opening)
            next_close = end.start() if end is not None else -1
        if next_close == -1:
            break  # no `}` from here on: nothing here closes
        if source.find(b"#", opening, next_close) < 0:
            continue  # the common case: no directive before the first `};`
        if _in_comment(source, body.start()) or on_directive_line(source, body.start()):
            continue
        if _continues_directive(source, body.start()):
            continue  # braces a `#define` writes
        closing = closing_brace(source, opening)
        if closing < 0:
            break  # unbalanced from here on
        done_until = closing
        comments = [m.span() for m in _BLOCK_COMMENT.finditer(source, opening, closing)]
        found = [
            line.span()
            for line in _DEFINE_LINES.finditer(source, opening, closing)
            if not any(start <= line.start() < end for start, end in comments)
        ]
        directives += found
        if found and body.re is _ENUM_OPENING:
            calls += [call.span(1) for call in _X_MACRO_LINE.finditer(source, opening, closing)]
    return directives, calls


_BLOCK_COMMENT = re.compile(rb"/\*.*?(?:\*/|\Z)", re.DOTALL)


def _in_comment(source: bytes, at: int) -> bool:
    """Whether `at` is in a `//` comment of its line or in a `/* */` comment (the nearest
    `/*` before it is not closed before it)."""
    line_start = source.rfind(b"\n", 0, at) + 1
    if b"//" in source[line_start:at]:
        return True
    opened = source.rfind(b"/*", 0, at)
    return opened >= 0 and source.find(b"*/", opened + 2, at) < 0


def _blanked(source: bytes, spans: Spans) -> bytes:
    """`source` with each span replaced by spaces; newlines stay (`extern "C"\n{`), so every
    line keeps its number."""
    blanked = bytearray(source)
    for start, end in spans:
        chunk = source[start:end]
        blanked[start:end] = (
            b" " * (end - start) if b"\n" not in chunk else _NOT_NEWLINE.sub(b" ", chunk)
        )
    return bytes(blanked)


class _Skipper:
    """Skips blanks, comments and directives; remembers the last `*/` search, so an unclosed
    `/*` after every macro line costs one scan of the file, not one per line."""

    def __init__(self, source: bytes, skipped: re.Pattern[bytes] = _SKIPPED) -> None:
        self.source, self.skipped = source, skipped
        self.searched_from, self.close = -1, -1  # no `*/` from `searched_from` until `close`

    def skip(self, at: int) -> int:
        source = self.source
        while True:
            skipped = self.skipped.match(source, at)  # matches the empty string at worst
            at = skipped.end() if skipped is not None else at
            if source[at : at + 2] != b"/*":
                return at
            if not 0 <= self.searched_from <= at + 2 or (0 <= self.close < at + 2):
                self.searched_from, self.close = at + 2, source.find(b"*/", at + 2)
            if self.close < 0:
                return at  # unclosed: nothing follows
            at = self.close + 2


def _macro_spans(source: bytes, lang: str) -> list[tuple[int, int]]:
    """Runs of macros in declaration position that a declaration follows: a keyword, a type
    and a name before `(` (`SPDLOG_INLINE void f(`), or in C++ one name before `(` on the
    same line (`FMT_CONSTEXPR color_type() noexcept`: a constructor)."""
    spans = []
    skip = _Skipper(source).skip
    for start, end in _line_start_spans(_DECLARATION_MACROS, source):
        if _continues_directive(source, start):
            continue  # a `#define`'s body (`  X_DEFINE(t, -)` under `#define X_S(t) \\`)
        after = skip(end)
        word = WORD.match(source, after)
        if (
            word is not None
            and word[0] in _QUALIFIERS
            and _last_code_byte(source, start) in (b",", b"(")
        ):
            # a parameter's type on a parameter list's next line, its qualifier after it:
            # OpenSSL's `f(SIV_BLOCK *x,\n    SIV_BLOCK const *y)` lost the type and the function
            continue
        for _ in range(4):  # `FMT_BEGIN_NAMESPACE` then `FMT_MODULE_EXPORT_BEGIN`: look past
            more = _MACRO_LINE.match(source, after)
            if more is None:
                break
            after = skip(more.end())
            word = WORD.match(source, after)
        if b"(" not in source[start:end] and _MACRO_TYPED_HEAD.match(source, after):
            # libgit2's `GIT_BEGIN_DECL` line, a doc comment, `GIT_EXTERN(int) f(..);`: a type
            # made by a macro follows, so the word before it is no return type. Left in, a
            # function `GIT_EXTERN` took the declarations up to the next one. The same before a
            # head a macro makes whole: expat's `END_TEST` then `START_TEST(name) {` (259 tests
            # were named `START_TEST`).
            spans.append((start, end))
            continue
        if word is None:
            # `SPDLOG_TRY {`: a macro that opens a block is a keyword (`try`); otherwise
            # `LIST_HEAD(name);`, `EXPORT_SYMBOL(f);`: a statement, not a prefix.
            following = source[after : after + 1]
            if following == b"{" and b"(" not in source[start:end]:
                spans.append((start, end))
            elif following == b"}" and _among_members(source, start, end):
                spans.append((start, end))  # `struct uv_req_s {\n  UV_REQ_FIELDS\n};`
            elif following == b"~" and lang == "cpp" and _DESTRUCTOR.match(source, after):
                spans.append((start, end))  # `FMT_CONSTEXPR20 ~basic_memory_buffer() {`
            continue
        if word[0] in _DECLARATION_KEYWORDS:
            spans.append((start, end))
            continue
        head = _HEAD.match(source, after)
        if head is None:
            continue
        names = len(_QUALIFIED_NAME.findall(_TEMPLATE_ARGUMENTS.sub(b" ", head[0])))
        if source[head.end() : head.end() + 1] != b"(":
            # `FOO_T count;`: the macro is the type, unless it stands alone on its line among
            # members and a whole declaration follows (`UV_REQ_FIELDS\n  uv_stream_t* h;`).
            if names >= 2 and _among_members(source, start, end):
                spans.append((start, end))
            elif names == 2 and _TYPED_VARIABLE.match(source, after, head.end() + 1):
                # glog's `GLOG_EXPORT fail_func_t g_fail = nullptr;`: a type and a name after
                # the macro, which is no type then. Left in, tree-sitter read `fail_func_t` as
                # the name and the variable was lost (before `int`, a keyword, it was blanked).
                spans.append((start, end))
            continue
        if _PARENTHESIZED_NAME.match(source, head.end()) and not _CAPITALS_END.search(head[0]):
            # `LUA_API lua_Number (lua_tonumberx) (lua_State *L)`: the type, then the name
            # (not CPython's `Py_LOCAL_INLINE(int) STRINGLIB(find)(`, a name a macro makes).
            names += 1
        # C needs the type left after the blanking; C++ reads `name(...)` as a constructor.
        # jemalloc's `void JEMALLOC_NOTHROW *\nJEMALLOC_ATTR(malloc)\nje_malloc(..)`: the type
        # is on the lines before the run, which end in a word or a `*`.
        if names >= 2 or (names == 1 and (lang == "cpp" or _type_before(source, start))):
            spans.append((start, end))
        elif names == 1 and (call := _LAST_MACRO_CALL.search(source, start, end)) and call.start() > start:  # fmt: skip
            # ncurses' `extern GCC_NORETURN NCURSES_EXPORT(void) err_abort (..);`: the call
            # holds the type, and parses alone; the words before it are blanked (left in, the
            # prototype became a function `NCURSES_EXPORT` that took the rest of the file).
            spans.append((start, call.start()))
    return spans


def _parameter_macros(source: bytes) -> list[tuple[int, int]]:
    """Attribute macros after a parameter's name (see _PARAMETER_MACRO): the word before is a
    name with a type or a `*` before it, no type word itself (`(const DWORD)` stays)."""
    spans: list[tuple[int, int]] = []
    at = source.find(b"UNUSED")
    while at >= 0:
        start = _word_start(source, at)
        macro = _PARAMETER_MACRO.match(source, start)
        at = source.find(b"UNUSED", at + 6)
        if macro is None or source[start - 1 : start] not in (b" ", b"\t"):
            continue
        name_end = _blank_start(source, start)
        name_start = _word_start(source, name_end)
        name = source[name_start:name_end]
        if not (name[:1].islower() or name[:1] == b"_") or name in _TYPE_WORDS:
            continue  # `(const DWORD UNUSED)`, `FOO_BAR UNUSED`: no parameter's name
        before = _blank_start(source, name_start)
        previous = source[before - 1 : before]
        typed = previous in (b"*", b"&") or (
            before < name_start
            and (previous.isalnum() or previous == b"_")
            and source[_word_start(source, before) : before] not in _TAG_KEYWORDS
        )
        if typed:
            spans.append(macro.span())
    return spans


def _prototype_wrappers(source: bytes) -> list[tuple[int, int]]:
    """The macro, its `(` and its `)` around a prototype's parameters (see
    _PROTOTYPE_WRAPPER): after a name or a `)`, the macro's parentheses hold one group."""
    spans = []
    at = source.find(b"((")
    while at >= 0:
        start, at = at, source.find(b"((", at + 2)
        end = _blank_start(source, start)
        if end == 0 or source[end - 1] not in _CAPITAL_BYTES:
            continue  # `if ((`, `= ((`, `__attribute__((`: most `((` end here
        before = _PROTOTYPE_WRAPPER.search(source, max(0, end - 96), start)
        if before is None or before[1] in KEYWORDS:
            continue  # `return FOO((x));`
        inner = _closing_parenthesis(source, start + 1)
        outer = _blank_end(source, inner + 1) if inner > 0 else -1
        if outer < 0 or source[outer : outer + 1] != b")" or on_directive_line(source, start):
            continue
        if _NOT_PARAMETERS.search(source, start + 1, inner):
            continue  # `_GL_ARG_NONNULL ((3))`: an attribute's arguments, not parameters
        spans += [(before.start(2), start + 1), (outer, outer + 1)]
    return spans


# trio's (in libxml2) K&R-compatible heads: `static int\nTrioGetPosition\nTRIO_ARGS2((format,
# indexPointer),\n\t   const char *format, ...)`. tree-sitter named the function `TRIO_ARGS2`
# (215 of libxml2's). The macro and its list of names (`(format, indexPointer),`) are blanked,
# the `(` before them kept: `TrioGetPosition (  const char *format, ...)`.
_ARGUMENTS_MACRO = re.compile(rb"[A-Za-z_]\w*[ \t]*\r?\n[ \t]*([A-Z_][A-Z0-9_]*)[ \t]*\Z")
# The list of names and the `)` that ends it, matched from the inner `(` on: a bounded match, not
# a scan for the closing parenthesis (4,000 bytes for each unclosed `((`: 55 s on 500 KB).
_NAMES_LIST = re.compile(rb"\s*[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*\s*\)")


def _arguments_macros(source: bytes) -> tuple[Spans, Spans]:
    """The macros (uses of them) and the lists of names (no use of anything) to blank."""
    macros: Spans = []
    lists: Spans = []
    at = source.find(b"((")
    while at >= 0:
        start, at = at, source.find(b"((", at + 2)
        macro = _ARGUMENTS_MACRO.search(source, max(0, start - 96), start)
        if macro is None or macro[1] in KEYWORDS or on_directive_line(source, start):
            continue
        names = _NAMES_LIST.match(source, start + 2)
        if names is None:
            continue
        comma = _blank_end(source, names.end())
        if comma < 0 or source[comma : comma + 1] != b",":
            continue
        macros.append(macro.span(1))
        lists.append((start + 1, comma + 1))
    return macros, lists


def _not_keywords(words: bytes) -> bool:
    """None of `words` is a keyword (`struct final Foo {` is no attribute)."""
    return not any(word in KEYWORDS or word in _RECORD_WORDS for word in words.split())


def _declaration_wrappers(source: bytes) -> list[tuple[int, int]]:
    """The macro and its parentheses around a whole function head at a line's start, the body
    after them: libuv's `UV_UNUSED(static int cmpxchgi(int* p, int n)) {` (an attribute the
    macro adds), `HEAP_EXPORT(void heap_init(struct heap* h)) {`. Tree-sitter reads the macro
    as a type and loses the function; blanked, the head is read as written. The argument must
    be a head: words, then a name and its parameters, no comma outside them."""
    spans = []
    lines = b"\n" + source  # the first line starts after a `\n` too; offsets are one more
    for found in _DECLARATION_WRAPPER.finditer(lines):
        opening = found.end() - 2
        closing = _closing_parenthesis(source, opening)
        if closing < 0 or not _BODY_AFTER.match(source, closing + 1):
            continue
        inner = _without_qualifiers(source[opening + 1 : closing])  # `Kind kind() const`
        if not inner.endswith(b")") or b"," in _NESTED_PARENTHESES.sub(b"", inner):
            continue
        spans += [(found.start(1) - 1, opening + 1), (closing, closing + 1)]
    return spans


_HEAD_QUALIFIERS = (b"const", b"noexcept", b"override", b"final", b"&")


def _without_qualifiers(head: bytes) -> bytes:
    """A function head without the qualifiers after its parameters (`f() const &` -> `f()`),
    and without trailing blanks."""
    head = head.rstrip()
    while True:
        for word in _HEAD_QUALIFIERS:
            if head.endswith(word) and (
                word == b"&" or not _is_word_byte(head, len(head) - len(word) - 1)
            ):
                head = head[: -len(word)].rstrip()
                break
        else:
            return head


def _attributes_before_name(source: bytes) -> list[tuple[int, int]]:
    """Attribute macros with number arguments ending the return type's line, the function's
    name at the start of the next (see _ATTRIBUTE_LINE_END), or before the name on its line
    (_ATTRIBUTE_BEFORE_NAME): a type stands before the macro."""
    calls = []  # (the opening and the closing parenthesis of each attribute's arguments)
    for match in _ATTRIBUTE_LINE_END.finditer(source):
        if match[1] in KEYWORDS or (
            source[match.end()] in b" \t"  # an indented name after an unindented head only:
            and source[source.rfind(b"\n", 0, match.start()) + 1] in b" \t"  # not `if (x)\n\tf(`
        ):
            continue
        opening = _opening_parenthesis(source, match.start())
        if opening < 0:
            continue
        arguments = source[opening + 1 : match.start()]
        # numbers (`__printf(2, 3)`), or an attribute's own parentheses (xz's
        # `static void lzma_attribute((__noreturn__))\nerror_lzma_preset(..)`)
        if _NUMBER_ARGUMENTS.fullmatch(arguments) or _ATTRIBUTE_ARGUMENTS.fullmatch(arguments):
            calls.append((opening, match.start()))
    calls += [(m.start(1), m.end(1) - 1) for m in _ATTRIBUTE_BEFORE_NAME.finditer(source)]
    for match in _DOUBLE_PARENTHESES_BEFORE_NAME.finditer(source) if b"((" in source else ():
        opening = _opening_parenthesis(source, match.start() + 1)
        if opening >= 0 and _ATTRIBUTE_ARGUMENTS.fullmatch(source, opening + 1, match.start() + 1):
            calls.append((opening, match.start() + 1))  # `((..))`, not `f(g(x)) h(`
    spans = []
    for opening, closing in calls:
        head = _TYPED_ATTRIBUTE.search(source, max(0, opening - 200), opening)
        if head is None or head[1] in _NOT_DECLARATORS or head[1] == b"else":
            continue  # `return f(1, 2)`: a statement, whatever follows
        spans.append((head.start(2), closing + 1))
    return spans


def _last_code_byte(source: bytes, at: int) -> bytes:
    """The last byte before the line holding `at` that is no space (b"" at the file's start);
    comments are not skipped (a line ending in one is taken as it ends)."""
    end = source.rfind(b"\n", 0, at)
    while end > 0 and source[end - 1] in b" \t\r\n":
        end -= 1
    return source[end - 1 : end] if end > 0 else b""


def _line_start_spans(pattern: re.Pattern[bytes], source: bytes) -> list[tuple[int, int]]:
    """Group 1's span of each match of `pattern`, which starts with `\n` (a literal prefix
    makes the scan skip from line to line), the file's first line's too (no `\n` before it)."""
    first = pattern.match(b"\n" + source[:400])
    spans = [(first.start(1) - 1, first.end(1) - 1)] if first is not None else []
    return spans + [match.span(1) for match in pattern.finditer(source)]


def _annotations(source: bytes) -> list[tuple[int, int]]:
    """_ANNOTATION_CALL's macros after a variable's name (_ANNOTATED_NAME)."""
    spans = []
    for call in _ANNOTATION_CALL.finditer(source):
        name = _ANNOTATED_NAME.search(source, max(0, call.start() - 100), call.start() + 1)
        if name is not None and name[1] not in KEYWORDS:
            spans.append(call.span(1))
    return spans


def _after_name_macros(source: bytes) -> list[tuple[int, int]]:
    """_AFTER_NAME_MACROS' runs after a name, and the export macros before it (`class API Foo
    FINAL {`, which _EXPORT_MACROS leaves). The name is capitals too only before a `FINAL` or
    `SEALED` macro (`class A2 FINAL : Base`); else `class API FOO {` is an export macro and a
    name, as _EXPORT_MACROS reads it."""
    spans = []
    for pattern in _AFTER_NAME_MACROS:
        for match in pattern.finditer(source):
            if _CAPITALS.fullmatch(match[2]) and not _FINAL_WORD.search(match[3]):
                continue
            if _LOWER_EXPORT_WORD.fullmatch(match[2]) and not _FINAL_WORD.search(match[3]):
                continue  # Poco's `class Net_API HTTPIOS: public ..`: a macro, then the name
            spans += [span for span in (match.span(1), match.span(3)) if span[0] < span[1]]
    return spans


_FINAL_WORD = re.compile(rb"FINAL|SEALED")
_LOWER_EXPORT_WORD = re.compile(_LOWER_EXPORT)
# `FLATBUFFERS_MANUALLY_ALIGNED_STRUCT(4) Vec3 FLATBUFFERS_FINAL_CLASS {` (every struct
# flatbuffers generates): a macro that expands to `struct` and its attributes, then the name.
# Left in, tree-sitter-cpp lost the struct and, at its `};`, the namespace around it. The call
# becomes the keyword its name ends in (blank_macros), the macros after the name are blanked.
# A capitals macro used as an `if` (capnproto's `KJ_IF_MAYBE(value, maybe) {..} else {..}`): a
# statement's start, its arguments, a block. Only one followed by `else` is rewritten (below).
# The arguments in the pattern (four levels of parentheses, no `;` or brace), so that the scan
# runs in C, not a Python loop per capitals call (the kernel has hundreds of thousands).
_MACRO_IF = re.compile(
    rb"[;{}][ \t\r\n]*([A-Z][A-Z0-9]*_[A-Z0-9_]*)[ \t]*"
    rb"\((?:[^();{}]|\((?:[^();{}]|\((?:[^();{}]|\([^();{}]*\))*\))*\))*\)(?=[ \t\r\n]*\{)"
)  # the `{` looked at, not taken: a nested `KJ_IF_MAYBE(..) {` starts after it
_ELSE_AFTER = re.compile(rb"\s*else\b")
_IF_BLOCK_LIMIT = 8_000  # bytes: a longer block after a macro is left as it is
_LAST_MACRO_CALL = re.compile(rb"[A-Z_][A-Z0-9_]*[ \t]*\([^()]*\)[ \t]*\Z")
# An empty last argument (`foo, );`, `foo, /* none */\n);`; comments bounded) and the start of
# the capitals macro call it must end, as a statement (`PYBIND11_OVERRIDE(`): _empty_last_arguments.
_EMPTY_LAST_ARGUMENT = re.compile(
    rb",(?:[ \t\r\n]|/\*(?:[^*]|\*(?!/)){0,400}\*/|//[^\n]{0,400}\n)*\)"
)
_MACRO_STATEMENT_START = re.compile(rb"[;{}][ \t\r\n]*[A-Z][A-Z0-9_]+[ \t]*\Z")
_RECORD_MACRO = re.compile(
    rb"\n[ \t]*([A-Z][A-Z0-9_]*_(STRUCT|CLASS)[ \t]*\([^()\n]*\))[ \t]+[A-Za-z_]\w*(?!\w)[ \t]*"
    rb"((?:[A-Z][A-Z0-9_]*[A-Z0-9_](?!\w)[ \t]*)*)(?=\s*(?:final\s*)?(?:\{|:(?!:)))"
)


def _macro_ifs(source: bytes) -> Spans:
    """The names of macros used as an `if`: `KJ_IF_MAYBE(x, y) {..} else {..}` inside a class's
    method left the `else` without its `if`, and tree-sitter lost the members after it (50 in
    capnproto) or made a function of the class. Rewritten `if` (the arguments a condition),
    the statement parses as written. Without an `else` the call and its block parse already."""
    spans = []
    for found in _MACRO_IF.finditer(source):
        brace = source.find(b"{", found.end())
        if source.find(b"else", brace, brace + _IF_BLOCK_LIMIT) < 0:
            continue
        block_end = closing_brace(source, brace, _IF_BLOCK_LIMIT)
        if block_end > 0 and _ELSE_AFTER.match(source, block_end):
            spans.append(found.span(1))
    return spans


def _empty_last_arguments(source: bytes) -> Spans:
    """The comma before an empty last argument of a capitals macro called as a statement:
    pybind11's `{ PYBIND11_OVERRIDE(int, B, foo, ); }` (a type among the arguments, and then
    nothing) lost the class's other members and made a method of the macro (30 members lost in
    its tests). Without the comma the arguments parse as a call's."""
    spans = []
    for found in _EMPTY_LAST_ARGUMENT.finditer(source):
        opening = _opening_parenthesis(source, found.end() - 1)
        if opening >= 0 and _MACRO_STATEMENT_START.search(source, max(0, opening - 200), opening):
            spans.append((found.start(), found.start() + 1))
    return spans


def _record_attributes(source: bytes) -> list[tuple[int, int]]:
    """_RECORD_ATTRIBUTES' runs, but for a typedef's name (`typedef struct {..} __kernel_fd_set;`,
    the word a `typedef` before the record's `{` declares when no other name follows it)."""
    spans = []
    for match in _RECORD_ATTRIBUTES.finditer(source):
        if match.group(2):  # a name follows the run: it is the one declared
            spans.append(match.span(1))
            continue
        head = _record_head(source, match.start())  # the match starts at its `}`'s line end
        if head is not None and not _TYPEDEF.search(source, *head):
            spans.append(match.span(1))
    return spans


def _record_capitals(source: bytes) -> Spans:
    """The macros _RECORD_CAPITALS finds after a record's `}`."""
    spans: Spans = []
    for match in _RECORD_CAPITALS.finditer(source):
        line_start = source.rfind(b"\n", 0, match.start()) + 1
        if source[line_start : match.start()].strip(b" \t"):
            continue
        gap, name, macro = match[1], match[2], match[3]
        head = None
        if b"\n" in gap:  # within 4 KB: the kernel's `}\nEXPORT_SYMBOL(f);` ends functions
            head = _record_head(source, match.start(), 4096)
            if head is None or not _RECORD_HEAD_WORD.search(source, *head):
                continue
        if name is not None:
            if name not in KEYWORDS and name not in _RECORD_WORDS:
                spans.append(match.span(3))
            continue
        if macro.endswith(b")"):
            spans.append(match.span(3))
            continue
        head = head or _record_head(source, match.start())
        if head is not None and not _TYPEDEF.search(source, *head):
            spans.append(match.span(3))
    return spans


def _typedef_defined_macros(source: bytes) -> Spans:
    """Words in capitals this file defines as macros, in a typedef of words alone, as long as a
    type and a name are left: libtiff's `typedef TIFF_MSC_DEPRECATED int8_t int8
    TIFF_GCC_DEPRECATED;` was a type `int8_t` and a variable `TIFF_GCC_DEPRECATED`. A macro that
    is the type (`#define MY_INT int` .. `typedef MY_INT count;`) leaves one word: kept."""
    spans: Spans = []
    defined: set[bytes] | None = None
    for match in _SIMPLE_TYPEDEF.finditer(source):
        if _is_word_byte(source, match.start() - 1):
            continue
        words = list(WORD.finditer(source, match.start(1), match.end(1)))
        capitals = [w for w in words if _CAPITALS.fullmatch(w[0]) and b"_" in w[0]]
        if not capitals:
            continue
        if defined is None:
            defined = _defined_capitals(source)
        macros = [w for w in capitals if w[0] in defined]
        left = [w[0] for w in words if w not in macros]
        # a type and a name left: `int8_t int8`, not `struct foo` (the name was the macro)
        if macros and len(left) >= 2 and left[-1] not in KEYWORDS and left[-2] not in _TAGS:
            spans += [w.span() for w in macros]
    return spans


def _defined_capitals(source: bytes) -> set[bytes]:
    """The names in capitals this file `#define`s (object-like: `#define PACKED ..`)."""
    return {m[1] for m in _DEFINED_CAPITALS.finditer(source)}


_TAGS = frozenset((b"struct", b"union", b"enum", b"class"))
# the literal first (a `\b` before it made the engine try every byte); the byte before: below
_SIMPLE_TYPEDEF = re.compile(rb"typedef[ \t]+([A-Za-z_][\w \t*]{0,200}?)[ \t]*;")


def _record_macros_before_names(source: bytes) -> Spans:
    """The macros _RECORD_MACRO_BEFORE_NAME finds between a record's `}` and the name after,
    and a word this file defines as a macro alone before the `;` (the kernel's bcm3510_priv.h:
    `#define PACKED __attribute__((packed))` .. `} PACKED;`, no variable `PACKED`)."""
    spans: Spans = []
    for match in _RECORD_MACRO_BEFORE_NAME.finditer(source):
        head = _record_head(source, match.start(), 4096)  # the `}` at the match's start
        if head is not None and _RECORD_HEAD_WORD.search(source, *head):
            spans.append(match.span(1))
    if spans:
        defined = _defined_capitals(source)
        spans += [m.span(1) for m in _RECORD_DEFINED_MACRO.finditer(source) if m[1] in defined]
    return spans


def _record_head(source: bytes, before: int, window: int = 65536) -> tuple[int, int] | None:
    """(start, end) of the text before the `{` that the first `}` after `before` closes, back
    to the previous `;` or `}`; None when no `{` is found within `window` bytes."""
    opening = _opening_brace(source, source.find(b"}", before), window)
    if opening < 0:
        return None
    return max(source.rfind(b";", 0, opening), source.rfind(b"}", 0, opening)) + 1, opening


def _opening_brace(source: bytes, closing: int, window: int = 65536) -> int:
    """The offset of the `{` that the `}` at `closing` closes, within `window` bytes; -1 if
    none (strings and comments are not skipped: a miss only leaves the attributes in)."""
    depth, at, limit = 1, closing, max(0, closing - window)
    while True:
        opening, inner = source.rfind(b"{", limit, at), source.rfind(b"}", limit, at)
        if opening < 0:
            return -1
        if inner > opening:  # a nested record's `}` comes first, going back
            depth, at = depth + 1, inner
            continue
        depth, at = depth - 1, opening
        if depth == 0:
            return opening


def _initializer_macros(source: bytes) -> list[tuple[int, int]]:
    """A capitalised macro whose parentheses start with `=` (see _INITIALIZER_MACRO): its name,
    `(` and `)` are blanked, the initialiser kept, when `;` or `,` follows in code."""
    spans = []
    at = source.find(b"(=")
    while at >= 0:
        opening, at = at, source.find(b"(=", at + 2)
        name = _INITIALIZER_MACRO.search(source, max(0, opening - 64), opening)
        if name is None or source[opening + 2 : opening + 3] == b"=":
            continue  # `x(==`: no initialiser
        closing = _closing_parenthesis(source, opening, strings=True)
        if closing < 0 or not _DECLARATION_END.match(source, closing + 1):
            continue
        line = source[source.rfind(b"\n", 0, opening) + 1 : opening].lstrip()
        if line[:1] in (b"#", b"*", b"/"):
            continue  # a directive's or a comment's text
        spans += [(name.start(), opening + 1), (closing, closing + 1)]
    return spans


# A statement as a capitals macro's argument: pugixml's tests' `CHECK_ALLOC_FAIL(for (..)
# ..);`. tree-sitter reads a call's arguments as expressions, and the `for` was an error that
# took the next definitions with it (a TEST's range ran over five more, a function named
# `CHECK_ALLOC_FAIL` replaced eight). The argument is left unread: its strings and names are
# read from the text.
_STATEMENT_OPEN = re.compile(rb"\([ \t\r\n]*(?:for|while|if|switch|do|return)[ \t\r\n]*[({]")
# In C++, a declaration that constructs an object is one too: cpp-httplib's tests'
# `ASSERT_ANY_THROW(Client cli("scheme://yahoo.com"));`, `EXPECT_NO_THROW(std::string
# s("a"));`. tree-sitter's recovery from `Client cli(` read the string's `//` as a comment's
# start, and lost the TEST around it and the next one (a variable `cli` of the file instead).
# A type (a name, `::` paths, one level of `<..>`), a name, then `{` or `(` and a literal: no
# parameter list starts so (a wrapped declaration, `MACRO(Foo bar(int x = 0), "..")`, keeps
# its method). The type may be no keyword (`new Foo("a")`).
_STATEMENT_OR_DECLARATION_OPEN = re.compile(
    rb"\([ \t\r\n]*(?:(?:for|while|if|switch|do|return)[ \t\r\n]*[({]"
    rb"|(?P<type>[A-Za-z_]\w*)(?:[ \t]*::[ \t]*[A-Za-z_]\w*)*(?:[ \t]*<[^<>;{}()\n]*>)?"
    rb"(?:[ \t]*[*&]+[ \t]*|[ \t]+)[A-Za-z_]\w*[ \t]*(?:\{|\([ \t]*(?:\"|'|\d)))"
)
_EXPRESSION_WORDS = KEYWORDS | frozenset(b"typeid co_await co_yield co_return not and or".split())


def _statement_arguments(source: bytes, lang: str) -> Spans:
    """The arguments of capitals macros that begin with a statement (_STATEMENT_OPEN; in C++
    _STATEMENT_OR_DECLARATION_OPEN), up to the call's `)` (_closing_parenthesis: strings
    skipped, `;` and braces allowed); a call inside a scanned one is not scanned again (linear
    in hostile input)."""
    spans: Spans = []
    scanned = 0  # each byte is scanned once: a call inside one scanned already is skipped
    opens = _STATEMENT_OR_DECLARATION_OPEN if lang == "cpp" else _STATEMENT_OPEN
    # The `(` first (a literal the search skips to), the capitals name before it then: a
    # pattern that began at the name tried every capital letter (1 s of the kernel sample).
    for match in opens.finditer(source):
        opening = match.start()
        if opening < scanned or not _CAPITALS_END.search(source, max(0, opening - 120), opening):
            continue
        if match.lastgroup == "type" and match["type"] in _EXPRESSION_WORDS:
            continue  # `EXPECT_TRUE(new Foo("a"))`: an expression
        closing = _closing_parenthesis(source, opening, strings=True, statements=True)
        if closing < 0:
            scanned = opening + _PARENTHESIS_REACH  # none within reach: nor for a call inside
            continue
        spans.append((opening + 1, closing))
        scanned = closing + 1
    return spans


_PARENTHESIS_REACH = 4000


def _closing_parenthesis(
    source: bytes, opening: int, strings: bool = False, statements: bool = False
) -> int:
    """The offset of the `)` that closes the `(` at `opening`, within 4,000 bytes and one
    declaration; -1 if none. With `strings`, a string literal's bytes are skipped; with
    `statements`, `;` and braces may stand inside (a statement as an argument)."""
    depth = 0
    at, end = opening, min(len(source), opening + _PARENTHESIS_REACH)
    while at < end:
        byte = source[at]
        at += 1
        if byte == 0x22 and strings:  # "
            literal = _STRING_REST.match(source, at)
            if literal is None:
                return -1
            at = literal.end()
        elif byte == 0x28:  # (
            depth += 1
        elif byte == 0x29:  # )
            depth -= 1
            if depth == 0:
                return at - 1
        elif byte in (0x3B, 0x7B, 0x7D) and not statements:  # ; { }
            return -1
    return -1


def _continues_directive(source: bytes, at: int) -> bool:
    """Whether the line holding `at` continues the one before it (that line ends in `\\`): a
    `#define` body's line. Blanked there, a body's only line left the `\\` joining the blank
    line, and tree-sitter-cpp ran the `#define` on into the next one (yaml-cpp's
    YAML_DEFINE_CONVERT_STREAMABLE_UNSIGNED was lost so)."""
    end = source.rfind(b"\n", 0, at)
    while end > 0 and source[end - 1] in b" \t\r":
        end -= 1
    return end > 0 and source[end - 1] == 0x5C  # backslash


def on_directive_line(source: bytes, at: int) -> bool:
    """Whether the byte at `at` is on a preprocessor directive's line (`#ifdef X`)."""
    line_start = source.rfind(b"\n", 0, at) + 1
    return source[line_start:at].lstrip(b" \t").startswith(b"#")


def _blank_start(source: bytes, end: int) -> int:
    """Where the run of spaces and tabs that ends at `end` starts."""
    start = end
    while start > 0 and source[start - 1] in b" \t":
        start -= 1
    return start


def _blank_end(source: bytes, start: int) -> int:
    """Where the run of spaces and tabs that starts at `start` ends."""
    end = start
    while end < len(source) and source[end] in b" \t":
        end += 1
    return end


def _word_start(source: bytes, end: int) -> int:
    """Where the identifier that ends at `end` starts (`end` when none does)."""
    start = end
    while start > 0 and (source[start - 1 : start].isalnum() or source[start - 1] == 95):
        start -= 1
    return start


def _trailing_macros(source: bytes) -> list[tuple[int, int]]:
    """Macros after the `)` of a function declarator: the `)` closes a parentheses group that
    a name (not a keyword: `if (x) FOO_BAR(y);`) or an operator opens; then the runs of words
    in any case that _trailing_words takes for attributes."""
    spans = []
    lower = _TRAILING_LOWER_MACRO.finditer(source) if b"_function" in source else ()
    for match in chain(_TRAILING_MACRO.finditer(source), lower):
        opening = _opening_parenthesis(source, match.start())
        if opening < 0:
            continue
        name = _NAME_BEFORE.search(source, max(0, opening - 64), opening)
        if name is None and _POINTER_DECLARATOR.search(source, max(0, opening - 200), opening):
            spans.append(match.span(1))  # `int (*hook)(int) MODULE_ATTR;`
            continue
        if name is None or name[1] in _NOT_DECLARATORS or b'"' in match[1]:
            continue  # a statement, or a call whose string stays searchable
        if name[1] is not None and _CAPITALS.fullmatch(name[1]):
            continue  # `typedef STACK_OF(X509) X509_CHAIN;`: a macro type, then the name
        if name[1] in (b"__attribute__", b"__declspec") and _TYPEDEF.search(
            source, source.rfind(b"\n", 0, opening) + 1, opening
        ):
            continue  # `typedef T __attribute__((..)) LTC_FAST_TYPE;`: then the name
        if on_directive_line(source, match.start()):
            continue  # `#if defined(X)\n  RETURN_SKIP(..);`: a directive's parentheses
        spans.append(match.span(1))
    found = {start for start, _ in spans}
    return spans + [
        match.span(1)
        for match in _TRAILING_WORDS.finditer(source)
        if match.start(1) not in found and _trailing_words(source, match)
    ]


def _trailing_words(source: bytes, match: re.Match[bytes]) -> bool:
    """Whether the words _TRAILING_WORDS found after a `)` are attributes: none is a keyword
    nor a declarator, and the `)` ends a function declarator's parameters that name a
    parameter (or are empty, `void` or `...`), outside a directive and a comment."""
    if b'"' in match[1]:
        return False  # a call whose string stays searchable
    for item in _TRAILING_ITEM.finditer(match[1]):
        if item[1] in _NOT_TRAILING_WORDS or (
            item[2] is not None and _names_parameters(item[2][1:-1])
        ):
            return False  # `LZMA_API(void) lzma_end(lzma_stream *strm) ..`: a declarator
    opening = _opening_parenthesis(source, match.start())
    if opening < 0 or on_directive_line(source, opening) or _continues_directive(source, opening):
        return False
    name = _NAME_BEFORE.search(source, max(0, opening - 64), opening)
    bare = True  # `()`, `(void)` and `(...)` are parameters
    if name is None:
        if not _POINTER_DECLARATOR.search(source, max(0, opening - 200), opening):
            return False  # `(void) x;`: a cast
    elif name[1] is not None and (name[1] in _NOT_FUNCTIONS or name[1] in KEYWORDS):
        return False  # `typeof(x) y;`, `if (x) y;`
    elif name[1] is not None and _CAPITALS.fullmatch(name[1]):
        # a macro's call, unless a parameter is named on the run's line: `GUEST_HANDLE(void)
        # h;`, `Q_PROPERTY(QString name READ name)\n  QString m_name;` declare members
        if b"\n" in source[match.start() : match.start(1)]:
            return False
        bare = False
    return _names_parameters(source[opening + 1 : match.start()], bare) and not _in_comment(
        source, match.start()
    )  # `// the type (see ET_* below)\n  Elf32_Half e_machine;`


def _names_parameters(parameters: bytes, bare: bool = True) -> bool:
    """Whether `parameters` (a parameter list's text) are (if `bare`) empty, `void` or `...`,
    or one of them is a name after a type (_NAMED_PARAMETER): not `(foo)`, `(const char *)`,
    `(a, b)`."""
    text = _LINE_COMMENTS.sub(b" ", parameters).strip()
    if text in (b"", b"void", b"..."):
        return bare
    for parameter in _NESTED_PARENTHESES.sub(b"()", text).split(b","):
        named = _NAMED_PARAMETER.search(parameter.strip())
        if named is not None and (
            named[2] is None
            or (named[2] not in _NOT_PARAMETER_NAMES and named[1] not in _RECORD_KEYWORDS)
        ):
            return True
    return False


def _opening_parenthesis(source: bytes, closing: int) -> int:
    """The offset of the `(` that the `)` at `closing` closes, within 4,000 bytes; -1 if none
    (comments and strings are not skipped: a parameter list rarely holds a parenthesis in
    either, and a miss only leaves a macro in)."""
    depth = 0
    for at in range(closing, max(-1, closing - 4000), -1):
        byte = source[at]
        if byte == 0x29:  # )
            depth += 1
        elif byte == 0x28:  # (
            depth -= 1
            if depth == 0:
                return at
        elif byte in (0x3B, 0x7B, 0x7D):  # ; { }: not inside one declarator
            return -1
    return -1


def _define_comments(source: bytes, start: int, end: int) -> list[tuple[int, int]]:
    """Comments in the body of the continued `#define` at `start:end`, after its first code:
    tree-sitter reads those before it as comments, not as the end of the `#define`."""
    spans = []
    name = _DEFINE_NAME.match(source, start)
    # Punctuation before the first token is code too (SDL's `#define END_LOOP \ } \ /* x */`).
    code_seen, previous_end = False, name.end() if name else end
    # A `(` after the name and its parameters is the value's (jemalloc's `#define SC_NBINS ( \`
    # then a comment line was named after the word after the comment); one that opens
    # parameters running over lines (`#define F(a, \`) is not code yet.
    opens_parameters = name is None or source[name.end() : name.end() + 1] == b"("
    aside = b" \t\r\n\\()" if opens_parameters else b" \t\r\n\\)"
    for token in TOKEN.finditer(source, name.end() if name else end, end):
        if source[previous_end : token.start()].strip(aside):
            code_seen = True  # punctuation between tokens is code (a parameter list's aside)
        previous_end = token.end()
        if token.lastgroup != "comment":
            code_seen = True
        elif code_seen and token[0].startswith(b"/*"):
            spans += _line_pieces(source, *token.span())
    return spans


_LINE_END = re.compile(rb"\\?\r?\n")


def _line_pieces(source: bytes, start: int, end: int) -> Spans:
    """A block comment's span cut at its line ends, each line's continuing `\\` left out: a
    comment over lines in a continued `#define` (jemalloc's `/* a \\` ` * b */ \\`) is
    blanked, and the `#define` still continues."""
    pieces: Spans = []
    for line_end in _LINE_END.finditer(source, start, end):
        pieces.append((start, line_end.start()))
        start = line_end.end()
    pieces.append((start, end))
    return [(a, b) for a, b in pieces if b > a]


# A one-line `#define` whose body holds a comment with code after it (zstd's `#define A ((8 <<
# 10) + 512 /* scratch */)`) or `/*` inside a string (`#define stdinmark "/*stdin*\\"`):
# tree-sitter-c ends the body at the comment, and the macro was lost or named after a word of
# the string (`stdin`), the next `#define`s with it. The comment, or the string's inside, is
# blanked for the parse; the text scan still reads both from the source.
_DEFINE_WITH_COMMENT = re.compile(rb"#[ \t]*define[ \t][^\n]*/\*[^\n]*")


def _one_line_define_comments(source: bytes) -> Spans:
    spans: Spans = []
    for define in _DEFINE_WITH_COMMENT.finditer(source):
        if define[0].rstrip().endswith(b"\\"):
            continue  # a continued one: _define_comments
        for token in TOKEN.finditer(source, define.start(), define.end()):
            kind, text = token.lastgroup, token[0]
            if kind == "string" and b"/*" in text:
                spans.append((token.start() + 1, token.end() - 1))
            elif (
                kind == "comment"
                and text.startswith(b"/*")
                and source[token.end() : define.end()].strip()
            ):
                spans.append(token.span())  # code after it: the parse would stop here
    return spans


_MEMBER_MACRO_LINE = re.compile(
    rb"[ \t]*[A-Z][A-Z0-9]*_[A-Z0-9_]*(?!\w)[ \t]*(?:\([^()\n]*\))?[ \t]*(?:\n|//|/\*)"
)


def _statement_macros(source: bytes) -> list[tuple[int, int]]:
    """Mixed-case macros alone on an indented line between statements (`Py_END_ALLOW_THREADS`):
    after `;`, `}` or a block's `{` (not an enum's or an initialiser's), before a statement."""
    spans = []
    skip = _Skipper(source).skip
    for match in _LONE_MACRO.finditer(source):
        word = match[1]
        if word in KEYWORDS:
            continue  # `else`
        if source[match.end() : match.end() + 1] not in (b"\n", b"/"):
            spans.append(match.span(1))  # a word before `if`: a macro, whatever its case
            continue
        statement = _STATEMENT_START.match(source, skip(match.end()))
        if statement is None or _function_head(source, statement):
            continue
        before = _previous_significant(source, match.start(1))
        if before == b"{":
            opener = _block_opener(source, match.start(1))
            if b"=" in opener or b"enum" in opener:
                continue
        elif before != b";" and before != b"}":
            continue
        spans.append(match.span(1))
    return spans


def _statement_calls(source: bytes) -> list[tuple[int, int]]:
    """All-caps macro calls alone on an indented line with no `;` (_LONE_CALL), between
    statements: after `;`, `}`, a case's `:`, a block's `{` (not an enum's or an initialiser's)
    or another such call; before a statement, a `case` or another such call."""
    spans: list[tuple[int, int]] = []
    skip = _Skipper(source).skip
    for match in _LONE_CALL.finditer(source):
        if source[max(match.start() - 2, 0) : match.start()].rstrip(b"\r").endswith(b"\\"):
            continue  # a `#define`'s continued line: the macro's own text
        after = skip(match.end())
        statement = _STATEMENT_START.match(source, after)
        if statement is None and not _CASE_LABEL.match(source, after):
            continue
        if statement is not None and _function_head(source, statement):
            continue
        before, _ = previous_code(source, match.start(1))
        if spans and before == b")" and source[spans[-1][1] : match.start(1)].isspace():
            pass  # the call before it was one too
        elif before == b"{":
            opener = _block_opener(source, match.start(1))
            if b"=" in opener or b"enum" in opener:
                continue
        elif before not in (b";", b"}", b":"):
            continue
        spans.append(match.span(1))
    return spans


def _function_head(source: bytes, statement: re.Match[bytes]) -> bool:
    """Whether what _STATEMENT_START took for a call is a function's head: its parentheses are
    followed by the body's `{` (FreeType's indented `  FT_Error\n  f( int x )\n  {`, where the
    return type on its own line was blanked as a statement macro and 26 functions were lost)."""
    if not statement[0].endswith(b"("):
        return False
    parameters = _NESTED_PARENTHESES.match(source, statement.end() - 1)
    if parameters is None:
        return False
    return _BODY_AFTER.match(source, parameters.end()) is not None


def _block_opener(source: bytes, at: int) -> bytes:
    """What opens the block whose `{` is the last one before `at`: the text between that `{`
    and the `;`, `{` or `}` before it, within 300 bytes (`struct uv_req_s`, `x = `)."""
    brace = source.rfind(b"{", 0, at)
    opener = source[max(0, brace - 300) : brace]
    return opener[max(opener.rfind(b";"), opener.rfind(b"}"), opener.rfind(b"{")) + 1 :]


def _among_members(source: bytes, start: int, end: int) -> bool:
    """Whether the macro run at `start:end` is alone on its line where members or statements
    start: after a `;` or `}`, or after the `{` of a struct, union or class (never in an enum
    or an initialiser, where `FOO_BAR` alone is a value)."""
    if _LINE_END.match(source, end) is None:
        return False
    before = _previous_significant(source, start)
    for _ in range(8):  # `UV_HANDLE_FIELDS\n  UV_STREAM_FIELDS\n};`: look past member macros
        if not before.isalnum() and before != b"_":
            break
        previous_end = source.rfind(b"\n", 0, start)
        line_start = source.rfind(b"\n", 0, max(previous_end, 0)) + 1
        line = _MEMBER_MACRO_LINE.match(source, line_start)
        if previous_end < 0 or line is None or line.end() > previous_end + 1:
            break  # the line before is not a member macro alone
        start = line_start
        before = _previous_significant(source, start)
    if before == b";" or before == b"}":
        return True
    if before != b"{":
        return False
    brace = source.rfind(b"{", 0, start)
    opener = source[max(0, brace - 300) : brace]
    cut = max(opener.rfind(b";"), opener.rfind(b"}"), opener.rfind(b"{"), opener.rfind(b"\n#"))
    opener = opener[cut + 1 :]
    return b"=" not in opener and b"enum" not in opener and bool(_RECORD_HEAD.search(opener))


def _type_before(source: bytes, at: int) -> bool:
    """The code before `at` ends the way a return type does: a `*`, or a word that is no
    keyword and no macro (`JEMALLOC_DIAGNOSTIC_PUSH` on the line before a test is none)."""
    last = _previous_significant(source, at)
    if last == b"*":
        return True
    if not last or not (last.isalnum() or last == b"_"):
        return False
    before = source[max(0, at - 200) : at].rstrip()
    word = _NAME_BEFORE.search(before)
    if word is None or word[1] is None or word[1] in KEYWORDS:
        return False
    if not _CAPITALS.fullmatch(word[1]):
        return True
    # `int JEMALLOC_NOTHROW`: a macro after a type on its line
    line = before[before.rfind(b"\n") + 1 : word.start()]
    return _C_TYPE_WORD.search(line) is not None


def _previous_significant(source: bytes, at: int) -> bytes:
    """The last byte of code before `at`, comments and directives skipped; b"" at the file's
    start, b"?" when it is further back than 16 lines of comments."""
    return previous_code(source, at)[0]


def previous_code(
    source: bytes, at: int, lines: int = 16, continued: bool = False
) -> tuple[bytes, int]:
    r"""_previous_significant, and the start of the line that byte is on (-1 if none). At most
    `lines` lines of comments and directives are walked back over; `continued`: the lines a
    directive continues onto (after a `\`) are directives too. The blanking heuristics keep
    16 lines and no `continued` (they were measured so); a function a macro defines asks more."""
    for _ in range(lines):
        line_start = source.rfind(b"\n", 0, at) + 1
        line = source[line_start:at]
        first = _logical_line_start(source, line_start) if continued else line_start
        if source[first:at].lstrip().startswith(b"#"):
            line = b""  # a directive
        elif b"//" in line:
            line = _before_line_comment(line)
        line = line.rstrip()
        if line.endswith(b"*/"):
            opening = source.rfind(b"/*", 0, line_start + len(line) - 2)
            if opening < 0:
                return b"?", -1
            at = opening
            continue
        if line:
            return line[-1:], line_start
        if line_start == 0:
            return b"", -1
        at = line_start - 1
    return b"?", -1


def _before_line_comment(line: bytes) -> bytes:
    """`line` up to its `//` comment; a `//` inside a string (`"http://x"`) is none."""
    at = line.find(b"//")
    while at >= 0:
        before = line[:at]
        if (before.count(b'"') - before.count(b'\\"')) % 2 == 0:
            return before
        at = line.find(b"//", at + 2)
    return line


def _logical_line_start(source: bytes, line_start: int) -> int:
    r"""The start of the line that the line at `line_start` continues (a `\` ends each line
    before it), or `line_start` itself."""
    while line_start > 0:
        end = line_start - 1  # the newline before
        start = source.rfind(b"\n", 0, end) + 1
        if not source[start:end].rstrip(b"\r").endswith(b"\\"):
            break
        line_start = start
    return line_start


def _call_statements(source: bytes) -> list[tuple[int, int]]:
    """A macro called at column 0 with a `;`, where declarations stand (after `;`, `{`, `}`
    or at the start), its arguments no parameter list (see _CALL_STATEMENT)."""
    spans = []
    for match in _CALL_STATEMENT.finditer(source):
        if _NOT_PARAMETERS.search(match[2]) is None:
            continue
        before = previous_code(source, match.start(1), lines=64, continued=True)[0]
        if before == b"{":
            if _SCOPE_OPENER.search(_block_opener(source, match.start(1))) is None:
                continue  # a function's body: `EXPECT_EQ(g(), 0);` is a statement
        elif before not in (b";", b"}", b""):
            continue
        spans.append(match.span(1))
    return spans


def _keyword(suffix: bytes) -> bytes:
    """The keyword a macro stands for, by its name's end (a record macro's: its kind)."""
    found = _EXCEPTION_KEYWORDS.get(suffix)
    if found is not None:
        return found
    return b"catch" if suffix.startswith(b"_CATCH") else suffix.lower()


def _paired(source: bytes, found: list[re.Match[bytes]]) -> list[re.Match[bytes]]:
    """The `_TRY` and `_CATCH` macros of `found` that make whole try statements: a `_TRY`
    block, then one or more `_CATCH(..) { .. }` (or `_CATCH_ALL { .. }`) clauses right after."""
    catches = {
        match.start(1): match
        for match in found
        if match[2].startswith(b"_CATCH") and match[2] != b"_CATCH_END"
    }
    kept = []
    for match in found:
        if match[2] != b"_TRY":
            continue
        chain = []
        end = _block_end(source, match.end(1))
        while end >= 0:
            skipped = _SKIPPED.match(source, end)  # matches "" at worst
            catch = catches.get(skipped.end() if skipped is not None else end)
            if catch is None:
                break
            if catch[2] == b"_CATCH_ALL":
                after = catch.end(1)
            else:
                arguments = _ARGUMENTS.match(source, catch.end(1))
                if arguments is None:
                    break
                after = arguments.end()
            chain.append(catch)
            end = _block_end(source, after)
        if chain and end >= 0:
            kept += [match, *chain]
    return kept


def _block_end(source: bytes, at: int) -> int:
    """The offset after the block whose `{` is the first code at or after `at`, or -1."""
    skipped = _SKIPPED.match(source, at)
    at = skipped.end() if skipped is not None else at
    return closing_brace(source, at) if source[at : at + 1] == b"{" else -1


def closing_brace(source: bytes, opening: int, limit: int | None = None) -> int:
    """The offset after the `}` that closes the `{` at `opening`, or -1 (also when it is more
    than `limit` bytes on). Of an `#if` with an `#else`, the first branch's braces count (both
    branches often open the same block)."""
    depth = 0
    saved: list[tuple[int, int | None]] = []  # per open `#if`: depth at it, depth after branch 1
    end = len(source) if limit is None else min(len(source), opening + limit)
    for match in _BRACE_TOKEN.finditer(source, opening, end):
        brace, directive = match["brace"], match["directive"]
        if brace == b"{":
            depth += 1
        elif brace == b"}":
            depth -= 1
            if depth == 0:
                return match.end()
        elif directive is not None:
            if directive.startswith(b"if"):
                saved.append((depth, None))
            elif not saved:
                continue
            elif directive == b"endif":
                at_if, after_first = saved.pop()
                depth = after_first if after_first is not None else depth
            else:  # `#else`, `#elif`: back to the depth at the `#if`
                at_if, after_first = saved[-1]
                saved[-1] = (at_if, depth if after_first is None else after_first)
                depth = at_if
    return -1


# A `{` after a head's `)` or its trailing words opens a body (oneTBB's `#if ..\n wait_node(C
# c) : my_context(c) {}\n#else ..`: two definitions, each its own), not an initialiser.
_BODY_BRACE = re.compile(rb"(?:\)|\b(?:const|noexcept|override|final|volatile|mutable))\s*\{")


def _braces_closed(line: bytes) -> bool:
    """Whether every brace of `line` closes on it, none before it opens: a member's braced
    initialiser (glm's `mat(T s)\n#if GLM_HAS_INITIALIZER_LISTS\n: value{col_type(s, 0)}\n#endif
    \n{`: 144 constructors ended at their head) or none at all; not a body's or a block's."""
    if b"{" not in line and b"}" not in line:
        return True
    if line.lstrip().startswith(b"{") or _BODY_BRACE.search(line):
        return False  # a body (or a block) starts: no part of the head
    return _braces_balanced(line)


def _braces_balanced(line: bytes) -> bool:
    """Whether every brace of `line` closes on it and none before it opens (a table's row
    `{1, "one"},` in an initialiser)."""
    depth = 0
    for brace in re.findall(rb"[{}]", line):
        depth += 1 if brace == b"{" else -1
        if depth < 0:
            return False
    return depth == 0


def _inner_conditionals(source: bytes) -> tuple[Spans, Spans]:
    """The spans to blank of each conditional inside a declaration (see _IF_DIRECTIVE): its
    directive lines, and the lines of every branch but the first. Only where no line of it
    holds a `;`, another directive than the conditional's own, or a brace that does not close
    on its line (_braces_closed; right after an initialiser's `{`, _opens_initializer, rows
    `{..},` too); after an `=`, each branch may end the declaration with its last line's `;`
    (_ends_declaration). Returned second, among the first: the spans of a conditional that
    opens an initialiser or ends a declaration, whose text is read as that of a branch the
    parse does not read (tree-sitter read all their branches before)."""
    spans: Spans = []
    unread: Spans = []
    scanned_to = -1
    for opening in _IF_DIRECTIVE.finditer(source):
        line_start = source.rfind(b"\n", 0, opening.start()) + 1
        if line_start < scanned_to or source[line_start : opening.start()].strip():
            continue  # nested in one already looked at, or not a directive
        previous = _previous_significant(source, line_start)
        in_initializer = previous == b"{" and _opens_initializer(source, line_start)
        if previous in (b";", b"{", b"}", b"") and not in_initializer:
            continue  # between statements or declarations: tree-sitter reads those
        closed = _braces_balanced if in_initializer else _braces_closed  # rows, or no body
        at, depth, first_branch = line_start, 0, True
        found: Spans = []
        ended: list[bool] = []  # per branch: whether its last line ends the declaration
        while True:
            directive = _DIRECTIVE_LINE.match(source, at)
            if directive is not None:
                kind = directive[1]
                if kind.startswith(b"if"):
                    depth += 1
                    if depth == 1:
                        ended.append(False)
                elif kind == b"endif":
                    depth -= 1
                elif depth == 1:
                    first_branch = False
                    ended.append(False)
                found.append((directive.start(), directive.end() - 1))
                at = directive.end()
                if depth == 0:
                    break
                continue
            line_end = source.find(b"\n", at)
            if line_end < 0:
                break
            line = source[at:line_end]
            if ended and ended[-1] and line.strip():
                break  # code after a branch's `;`: more than one declaration
            if b";" in line and depth == 1 and previous == b"=" and _ends_declaration(line):
                ended[-1] = True
            elif b";" in line or b"#" in line or not closed(line):
                break  # statements or declarations: leave the conditional to tree-sitter
            if not first_branch:
                found.append((at, line_end))
            at = line_end + 1
        scanned_to = at
        if depth == 0 and (all(ended) or not any(ended)):
            blanked = [(start, end) for start, end in found if end > start]
            spans += blanked
            if in_initializer or any(ended):
                unread += blanked
    return spans, unread


def _ends_declaration(line: bytes) -> bool:
    """Whether a line's only `;` is its last code (`    false;  // off`): the end of an
    initialiser a conditional chose (`bool on_ =\n#ifdef X\n  true;\n#else\n  false;\n#endif`)."""
    code = _before_line_comment(line).rstrip()
    return code.endswith(b";") and code.count(b";") == 1 and _braces_closed(code)


# A declaration before a braced initialiser's `{` (_opens_initializer), template arguments
# left out: words (a type, specifiers, `::` paths), `*`s and `&`s, then the declared name.
_BRACED_DECLARATION = re.compile(rb"\A\s*(?:[A-Za-z_][\w:]*[\s*&]+)+([A-Za-z_]\w*)\s*\Z")
# Words in a head that make its `{` a body: a record's, an enum's, a namespace's, a base
# list's (`struct A : public B {`, its `:` cut off by the window).
_BODY_HEAD_WORDS = frozenset(
    b"class struct union enum namespace public protected private virtual operator".split()
)
_NOT_DECLARED_NAMES = KEYWORDS | {b"final", b"override"}  # `struct A final {`, `f() override {`


# What stands before a member's declaration in its head and is none of it: comments, a doc
# comment over several lines too, and an access label (`public:` right above `bool allow_{`: a
# review's cases, where `public` read as a record's word and the member was lost).
_HEAD_COMMENTS = re.compile(rb"//[^\n]*|/\*.*?\*/", re.DOTALL)
_ACCESS_LABEL = re.compile(rb"\b(?:public|protected|private)[ \t]*:(?!:)")


def _opens_initializer(source: bytes, line_start: int) -> bool:
    """Whether the `{` last before `line_start` opens a braced initialiser: after an `=` (`int
    a[] = {`), or after a declared name and its type (`bool windows_style_{`, `std::vector<int>
    v{`), as CLI11's `bool allow_windows_style_options_{\n#ifdef _WIN32\n true\n#else\n false
    \n#endif\n};` opens one. Left to tree-sitter, which takes no directive in an initialiser
    list, the member was a function with no parameters, or (after `= {`) the class ended there."""
    brace = source.rfind(b"{", 0, line_start)
    window = source[max(0, brace - 300) : brace]
    cut = max(window.rfind(b";"), window.rfind(b"{"), window.rfind(b"}"))
    if cut < 0 and brace > 300:
        return False  # a head longer than the window: not a declarator's
    head = _HEAD_COMMENTS.sub(b" ", _DIRECTIVE_LINES.sub(b"", window[cut + 1 :]))
    head = _ACCESS_LABEL.sub(b" ", head).rstrip()
    if head.endswith(b"="):
        return True
    for _ in range(4):  # `std::map<int, std::vector<int>>`: the innermost first
        head, count = _TEMPLATE_ARGUMENTS.subn(b" ", head)
        if not count:
            break
    declaration = _BRACED_DECLARATION.match(head)
    if declaration is None or declaration[1] in _NOT_DECLARED_NAMES:
        return False
    return not any(word in _BODY_HEAD_WORDS for word in WORD.findall(head))


def _split_conditionals(source: bytes) -> list[tuple[int, int]]:
    """The spans to blank of each `#if` .. `#else` .. `#endif` whose branches each leave the
    same parentheses or braces open, or each end inside an expression (see _OPEN_ENDS): its
    directive lines and every branch but the one kept (the first; the `#else` of an `#if 0`).
    Only a conditional with none inside it; one ending inside an expression only inside none
    whose branches leave anything open or end inside an expression (Vim's `#if
    defined(UNIX)\n else {\n#endif` around `# ifdef UNIX\n if (a)\n# else\n if (b)\n# endif`,
    bash's `#ifdef SHELL` around such a pair: the parse of those stays as it was)."""
    lines: list[list[tuple[int, int]]] = []  # per conditional: its directive lines
    parents: list[int] = []  # per conditional: the one it is inside, or -1
    inner: list[bool] = []  # per conditional: whether another is inside it
    closed: list[int] = []  # conditionals in the order they end
    stack: list[int] = []
    for directive in CONDITIONAL_DIRECTIVE.finditer(source):
        start = directive.start()
        line_start = _directive_line_start(source, start)
        if line_start < 0:
            continue
        line_end = source.find(b"\n", start)
        line = (line_start, len(source) if line_end < 0 else line_end)
        kind = directive[1]
        if kind.startswith(b"if"):
            if stack:
                inner[stack[-1]] = True
            parents.append(stack[-1] if stack else -1)
            stack.append(len(lines))
            lines.append([line])
            inner.append(False)
        elif not stack:
            continue  # an `#endif` without its `#if` (a header cut in two)
        else:
            lines[stack[-1]].append(line)
            if kind == b"endif":
                closed.append(stack.pop())
    balanced: dict[int, bool] = {}

    def inside_balanced(index: int) -> bool:
        parent = parents[index]
        if parent < 0:
            return True
        if parent not in balanced:  # closed: nothing open, no branch ending in an expression
            branches = _branches(lines[parent])
            balanced[parent] = all(
                _balance(source, *branch) == (0, 0)
                and _last_code(source, *branch) not in _OPEN_ENDS
                for branch in branches
            )
        return balanced[parent] and inside_balanced(parent)

    spans: list[tuple[int, int]] = []
    for index in closed:
        if not inner[index] and len(lines[index]) > 2:
            spans += _kept_branch(source, lines[index], partial(inside_balanced, index))
    return spans


def _branches(lines: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The text between each directive line of a conditional and the next."""
    return [(end + 1, lines[i + 1][0]) for i, (_, end) in enumerate(lines[:-1])]


def _kept_branch(
    source: bytes, lines: list[tuple[int, int]], inside_balanced: Callable[[], bool]
) -> list[tuple[int, int]]:
    """For one conditional's directive lines (`#if`, `#elif`/`#else`, `#endif`): the spans to
    blank when every branch leaves the same nonzero count of `(` and `{` open, or each ends
    inside an expression or a declaration (see _OPEN_ENDS); else none."""
    branches = _branches(lines)
    balances = {_balance(source, start, end) for start, end in branches}
    if len(balances) != 1:
        return []
    if balances == {(0, 0)}:
        ends = {_last_code(source, start, end) for start, end in branches}
        if not ends or not all(end and end in _OPEN_ENDS for end in ends):
            return []
        if not inside_balanced():
            return []
        after = _SKIPPED_DIRECTIVES.match(source, lines[-1][1])
        if after is not None and source[after.end() : after.end() + 1] == b"{":
            # Heads before one body: one function only where they name the same one (Vim's
            # `drawarea_style_updated_cb` or `drawarea_style_set_cb` are two names to keep).
            names = {_HEAD_NAME.search(source, start, end) for start, end in branches}
            if len({None if name is None else name[1] for name in names}) != 1:
                return []
    first = source[lines[0][0] : lines[0][1]]
    kept = len(branches) - 1 if _IF_ZERO.match(first) else 0
    blanked = [(start, end) for i, (start, end) in enumerate(branches) if i != kept]
    return lines + [(start, end) for start, end in blanked if end > start]


def _last_code(source: bytes, start: int, end: int) -> bytes:
    """The last character of code between `start` and `end` (comments left out), or b""."""
    text = _DIRECTIVE_LINES.sub(_first_line, source[start:end])  # a `#define` over lines
    for line in reversed(text.splitlines()):
        code = _LINE_COMMENTS.sub(b"", line).strip()
        if not code or code.startswith((b"*", b"/*")):  # a block comment's inner line
            continue
        if not code.startswith(b"#"):
            return code[-1:]
        if CONDITIONAL_DIRECTIVE.match(code) is None:
            return b"#"  # a `#define`: closed; a nested conditional's lines are looked past
    return b""


def _first_line(directive: re.Match[bytes]) -> bytes:
    return directive[0].split(b"\n", 1)[0]


def _balance(source: bytes, start: int, end: int) -> tuple[int, int]:
    """How many `(` and `{` the code between `start` and `end` leaves open (negative: closes)."""
    parentheses = braces = 0
    for token in _BALANCE_TOKEN.finditer(source, start, end):
        bracket = token[1]
        if bracket is None:
            continue  # a comment or a literal
        if bracket == b"(":
            parentheses += 1
        elif bracket == b")":
            parentheses -= 1
        elif bracket == b"{":
            braces += 1
        else:
            braces -= 1
    return parentheses, braces


def _is_head(source: bytes, skip: Callable[[int], int], at: int, ends: bytes = b"{") -> bool:
    """Whether a function's head without a return type starts at `at`: a name, its
    parameters, then `{` (CPython's `Py_LOCAL_INLINE(PyObject *)\nincr_true(void)\n{`), or
    another byte of `ends`."""
    name = WORD.match(source, at)
    if name is None or name[0] in KEYWORDS or name[0] in NOT_MACROS:
        return False
    parameters = _ARGUMENTS.match(source, name.end())
    if parameters is None:
        return False
    brace = skip(parameters.end())
    return source[brace : brace + 1] in ends and brace < len(source)


def _call_lines(source: bytes) -> list[tuple[int, int]]:
    """`DEFINE_FN(int, 16)` alone on a line at column 0 between declarations, with no `;`:
    a macro that expands to definitions. Not a function's own head (`foo(int a)` before `{`),
    nor a K&R one (`foo(a, b)` before `int a; ... {`)."""
    spans = []
    skip = _Skipper(source, _SKIPPED_DIRECTIVES).skip
    for match in _CALL_LINE.finditer(source):
        if match[2] in NOT_MACROS or match[2] in KEYWORDS:
            continue
        if _logical_line_start(source, match.start(1)) != match.start(1):
            continue  # the last line of a `#define` continued with `\`
        after = skip(match.end())
        following = source[after : after + 1]
        if following and following not in b"#_" and not following.isalpha():
            continue  # `{`, `;`, `=`, `,`: the line is a head or an expression
        if _BARE_DECLARATOR.match(source, after) or _is_head(source, skip, after):
            continue  # `Py_LOCAL_INLINE(int)\nSTRINGLIB(count)(..)`, `..\nincr(void)\n{`: a type
        name = WORD.match(source, after)
        if (
            name is not None
            and _LOWER.search(name[0])
            and _TYPE_ARGUMENT.fullmatch(match[3])
            and _is_head(source, skip, after, b";")
        ):
            # a prototype's type: libyaml's `YAML_DECLARE(int)\nyaml_parser_delete(..);` (not a
            # macro called after it: `DEFINE_STACK_OF(X)\nDEFINE_LHASH_OF(Y);`)
            continue
        before, line_start = previous_code(source, match.start(1))
        if before not in (b";", b"}", b")", b"") and not _LONE_CAPITALS.fullmatch(
            source, line_start, source.find(b"\n", line_start)
        ):
            continue  # `int\nfoo(void)`: a return type before it (not `QT_END_NAMESPACE`)
        if _KR_PARAMETERS.fullmatch(b" ".join(match[3].split())) is not None:
            brace, semicolon = source.find(b"{", after), source.find(b";", after)
            if 0 <= semicolon < brace and b"(" not in source[after:brace]:
                continue  # K&R: parameter declarations, then the body
        spans.append(match.span(1))
    return spans

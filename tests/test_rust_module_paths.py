"""Rust files a `mod` declaration loads from elsewhere (`#[path = "extern_impl.rs"] mod imp;`):
their items are qualified by the module Rust gives them (`fmt::imp::Formatter`), not by their
file's name (repomap/index/rust_paths.py). Real files in a temp dir, the real indexer, the real
CLI where users meet the names (`symbols`, `show`).
"""

from __future__ import annotations

from repomap.index.rust_paths import Declaration, declarations


def test_declarations_are_read_with_their_paths() -> None:
    source = b"""
        #[cfg(unix)]
        // a comment
        #[path = "a/b.rs"]
        #[allow(dead_code)]
        pub(crate) mod plain;
        #[cfg_attr(unix, path = "u.rs")]
        #[cfg_attr(windows, allow(x), path = "w.rs")]
        mod r#try;
        #[path = "inline"]
        mod q {
            #[path = "z.rs"]
            mod w;
            mod v;
        }
        mod body {
            fn f() {}
        }
        fn function() {
            #[path = "nowhere.rs"]
            mod local;
        }
        """
    assert declarations(source) == [
        Declaration((), "plain", ("a/b.rs",), False),
        Declaration((), "try", ("u.rs", "w.rs"), True),
        Declaration((("q", "inline"),), "w", ("z.rs",), False),
        Declaration((("q", "inline"),), "v", (), True),
    ]
    assert declarations(b"pub fn no_module() {}\n") == []

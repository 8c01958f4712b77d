"""`show` and `symbols` take a symbol's path as code writes it: a Python import path through its
module and the package that re-exports it, a Rust path from `crate::`, `self::` or the crate's
name. Real files in a temp dir, the real CLI in a subprocess, a real index."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli, write_tree

FILES: dict[str, str | bytes] = {
    # A source folder before the package, a re-export through the package's __init__ (relative),
    # another through a star import, one under an alias, one absolute, a submodule imported.
    "src/shop/__init__.py": """
        from .billing.invoice import Invoice as Bill
        from .billing import *
        from shop.catalog.items import Item
        from . import catalog
        """,
    "src/shop/billing/__init__.py": """
        from .tax import *
        """,
    "src/shop/billing/tax.py": """
        def vat_rate(country):
            return 0.2
        """,
    "src/shop/billing/invoice.py": """
        class Invoice:
            def total(self):
                return sum(line.amount for line in self.lines)
        """,
    "src/shop/catalog/__init__.py": "",
    "src/shop/catalog/items.py": """
        class Item:
            class Meta:
                ordering = ["name"]
        """,
    # The same names elsewhere: a module path must not land on them.
    "tests/test_invoice.py": """
        class Invoice:
            def total(self):
                return 0
        """,
    # A relative import climbs from the importing file's folder (a decoy `helpers` elsewhere),
    # never beyond the top package; a module too deeply nested for `ast` is passed over.
    "src/lib/__init__.py": "",
    "src/lib/core/__init__.py": "from ..helpers import thing\nfrom ... import stray\n",
    "src/lib/helpers.py": "from lib.deep import thing\n",
    "src/lib/deep.py": "def thing():\n    return 1\n",
    "src/other/helpers.py": "def thing():\n    return 'decoy'\n",
    "src/stray.py": "def stray():\n    return 0\n",
    "nested/__init__.py": "from .real import Thing\nx = " + " + ".join(["1"] * 100_000) + "\n",
    "nested/real.py": "class Thing:\n    pass\n",
    "gui/widget.cpp": "namespace gui {\nclass Widget {\n  void draw() {}\n};\n}\n",
    # A cycle of re-exports: an error, not a hang.
    "loop/__init__.py": "from loop.a import Thing\n",
    "loop/a.py": "from loop import Thing\n",
    # A workspace's crates, each with its `resolver::Resolver` (a folder named with `-`).
    "crates/alpha_core/src/resolver.rs": "pub struct Resolver {\n    depth: u8,\n}\n",
    "crates/beta-io/src/resolver.rs": "pub struct Resolver {\n    width: u8,\n}\n",
    "Cargo.toml": '[package]\nname = "ledger"\n',
    "src/lib.rs": "pub mod accounts;\n\npub struct Ledger {\n    open: bool,\n}\n",
    "src/accounts/mod.rs": """
        pub struct Account {
            balance: i64,
        }

        impl Account {
            pub fn deposit(&mut self, amount: i64) {
                self.balance += amount;
            }
        }
        """,
}


def indexed(root: Path, files: dict[str, str | bytes]) -> Path:
    """`files` written under `root` and indexed by the real CLI."""
    write_tree(root, files)
    done = run_cli("index", root)
    assert done.returncode == 0, done.stderr
    return root


def indexed_once(name: str, files: dict[str, str | bytes]) -> Any:
    """A module-scoped fixture: `files` indexed once for the module's tests."""

    @pytest.fixture(scope="module")
    def fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
        return indexed(tmp_path_factory.mktemp(name) / "repo", files)

    return fixture


repo = indexed_once("written", FILES)


def shown(repo: Path, name: str) -> tuple[str, int, str]:
    done = run_cli("show", name, "--json", "--root", repo)
    assert done.returncode == 0, (name, done.stderr)
    hit = json.loads(done.stdout)["results"][0]
    return hit["file_path"], hit["line_number"], hit["qualified_name"]


@pytest.mark.parametrize(
    ("name", "file", "qualified"),
    [
        ("shop.billing.invoice.Invoice.total", "src/shop/billing/invoice.py", "Invoice.total"),
        ("shop.Bill", "src/shop/billing/invoice.py", "Invoice"),  # an alias
        ("shop.Bill.total", "src/shop/billing/invoice.py", "Invoice.total"),
        ("shop.vat_rate", "src/shop/billing/tax.py", "vat_rate"),  # two star imports
        ("shop.Item.Meta", "src/shop/catalog/items.py", "Item.Meta"),  # absolute
        ("shop.catalog.items.Item", "src/shop/catalog/items.py", "Item"),
        ("crate::accounts::Account", "src/accounts/mod.rs", "accounts::Account"),
        ("self::accounts::Account::deposit", "src/accounts/mod.rs", "accounts::Account::deposit"),
        ("ledger::accounts::Account::deposit", "src/accounts/mod.rs", "accounts::Account::deposit"),
        ("::ledger::accounts::Account", "src/accounts/mod.rs", "accounts::Account"),
        ("crate::Ledger", "src/lib.rs", "Ledger"),  # at the crate's root
        ("ledger::Ledger", "src/lib.rs", "Ledger"),
        ("super::accounts::Account", "src/accounts/mod.rs", "accounts::Account"),
        ("lib.core.thing", "src/lib/deep.py", "thing"),  # two hops, from the files' folders
        ("core.thing", "src/lib/deep.py", "thing"),  # not the decoy src/other/helpers.py
        ("shop.__init__.Bill", "src/shop/billing/invoice.py", "Invoice"),
        (
            "alpha_core::resolver::Resolver",
            "crates/alpha_core/src/resolver.rs",
            "resolver::Resolver",
        ),
        ("beta_io::resolver::Resolver", "crates/beta-io/src/resolver.rs", "resolver::Resolver"),
    ],
)
def test_show_finds_a_symbol_by_the_path_code_writes(
    repo: Path, name: str, file: str, qualified: str
) -> None:
    path, _, found = shown(repo, name)
    assert (path, found) == (file, qualified)


def test_symbols_lists_it_first_as_an_exact_match(repo: Path) -> None:
    done = run_cli("symbols", "shop.Bill.total", "--json", "--root", repo)
    assert done.returncode == 0, done.stderr
    first = json.loads(done.stdout)["results"][0]
    assert (first["file_path"], first["qualified_name"], first["match"]) == (
        "src/shop/billing/invoice.py",
        "Invoice.total",
        "exact",
    )


@pytest.mark.parametrize(
    "name",
    [
        "shop.billing.Invoice",  # billing neither defines nor imports it
        "loop.Thing",  # a cycle of re-exports
        "shop.Missing",
        "other_crate::nothing::Here",
        "shop.billing.invoice.total",  # a method is no name of its module
        "shop.billing.invoice.invoice",  # nor is a class in another case
        "__init__.Invoice",
        "lib.core.stray",  # `from ... import stray` climbs beyond the top package
        "nested.Thing",  # its __init__ is too deep for ast: passed over, no traceback
        "std::Widget::draw",  # C++ names are not Rust paths
    ],
)
def test_a_path_to_nothing_is_still_not_found(repo: Path, name: str) -> None:
    done = run_cli("show", name, "--root", repo)
    assert done.returncode != 0
    assert f"no symbol named {name!r}" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_path_of_a_module_is_not_the_name_of_a_twin(repo: Path) -> None:
    """`Invoice.total` alone matches the test's twin too; through its module, only the code's."""
    done = run_cli("show", "Invoice.total", "--json", "--root", repo)
    assert done.returncode == 0
    data = json.loads(done.stdout)
    assert data["count"] >= 1 and "2 symbols match" in done.stderr
    assert shown(repo, "shop.billing.invoice.Invoice.total")[0] == "src/shop/billing/invoice.py"
    assert shown(repo, "test_invoice.Invoice.total")[0] == "tests/test_invoice.py"


def test_star_imports_are_followed_a_hop_at_a_time_and_bounded(tmp_path: Path) -> None:
    """A package that star-imports 120 modules, each star-importing 8 others: a name one hop
    away is found although earlier modules have chains of their own, and a name that is
    nowhere ends in a one-line error instead of a walk through every chain (8^4 per module)."""
    files: dict[str, str | bytes] = {
        "fan/__init__.py": "".join(f"from .m{i} import *\n" for i in range(120)),
    }
    for i in range(120):
        imports = "".join(f"from .m{(i + step) % 120} import *\n" for step in range(1, 9))
        files[f"fan/m{i}.py"] = f"{imports}\ndef f{i}():\n    return {i}\n"
    root = indexed(tmp_path / "repo", files)
    assert shown(root, "fan.f97")[:1] == ("fan/m97.py",)
    assert shown(root, "fan.m3.f5")[:1] == ("fan/m5.py",)  # m3 -> m4 -> m5, or m3 -> m5
    done = run_cli("show", "fan.nothing", "--root", root, timeout=60)
    assert done.returncode != 0 and "no symbol named 'fan.nothing'" in done.stderr


SECOND: dict[str, str | bytes] = {
    # A star import takes what `__all__` lists, else no name with a leading `_`.
    "stars/__init__.py": "from .impl import *\nfrom .hidden import *\n",
    "stars/impl.py": '__all__ = ["Public"]\n\nclass Public: ...\n\nclass NotExported: ...\n',
    "stars/hidden.py": "class _Private: ...\n",
    # The last binding wins; an `except` handler's only when nothing else binds it.
    "order/__init__.py": (
        "from .a import *\nfrom .b import *\nfrom .c import Y\nfrom .d import Y\n"
        "try:\n    from .fast import Z\nexcept ImportError:\n    from .slow import Z\n"
    ),
    "order/a.py": "class X: ...\n",
    "order/b.py": "class X: ...\n",
    "order/c.py": "class Y: ...\n",
    "order/d.py": "class Y: ...\n",
    "order/fast.py": "class Z: ...\n",
    "order/slow.py": "class Z: ...\n",
    # A package over a module of the same name, as Python imports it.
    "dual/__init__.py": "",
    "dual/mod.py": "class Thing: ...\n",
    "dual/mod/__init__.py": "class Thing: ...\n",
    # Namespace packages (no __init__.py) climb freely.
    "nsroot/ns/util.py": "class Tool: ...\n",
    "nsroot/ns/inner/mod.py": "from ..util import Tool\n",
    # A Cargo.toml names its crate; a path from another crate's name is no path of this tree.
    "engine/Cargo.toml": '[package]\nname = "motor-core"\n',
    "engine/src/lib.rs": "pub fn spawn() {}\n\npub mod net {\n    pub struct Stream;\n}\n",
}


second = indexed_once("written2", SECOND)


@pytest.mark.parametrize(
    ("name", "file"),
    [
        ("stars.Public", "stars/impl.py"),
        ("order.X", "order/b.py"),
        ("order.Y", "order/d.py"),
        ("order.Z", "order/fast.py"),
        ("dual.mod.Thing", "dual/mod/__init__.py"),
        ("ns.inner.mod.Tool", "nsroot/ns/util.py"),
        ("motor_core::spawn", "engine/src/lib.rs"),
        ("motor_core::net::Stream", "engine/src/lib.rs"),
        ("self::net::Stream", "engine/src/lib.rs"),  # self: some module, its path ends so
    ],
)
def test_python_and_rust_resolve_these_as_they_do(second: Path, name: str, file: str) -> None:
    assert shown(second, name)[0] == file


@pytest.mark.parametrize(
    "name", ["stars.NotExported", "stars._Private", "Vec::new", "Self::new", "tokio::spawn"]
)
def test_python_and_rust_refuse_these_as_they_do(second: Path, name: str) -> None:
    done = run_cli("show", name, "--root", second, "--no-refresh")
    assert done.returncode != 0 and f"no symbol named {name!r}" in done.stderr
    listed = run_cli("symbols", name, "--root", second, "--no-refresh", "--json")
    assert all(
        hit["match"] != "exact" for hit in json.loads(listed.stdout or "{}").get("results", [])
    )


REEXPORTS: dict[str, str | bytes] = {
    # A crate that names its items by the paths it re-exports, as regex, std and clap do.
    "Cargo.toml": '[workspace]\nmembers = ["pattern", "kernel"]\n',
    "pattern/Cargo.toml": '[package]\nname = "pattern"\nedition = "2018"\n',
    "pattern/src/lib.rs": """
        extern crate kernel as engine;

        mod spawn;
        mod unicode;
        pub mod text;

        pub use crate::unicode::{escape, Matcher, Options as MatchOptions, self};
        pub use self::spawn::spawn;
        pub use engine::Buffer;

        pub mod bytes {
            pub use crate::raw::*;
        }

        cfg_if::cfg_if! {
            if #[cfg(feature = "std")] {
                pub use crate::unicode::Finder;
            }
        }

        mod raw {
            pub struct Matcher;
        }

        mod cycle_a {
            pub use super::cycle_b::*;
        }
        mod cycle_b {
            pub use super::cycle_a::*;
        }
        pub use cycle_a::*;
        """,
    "pattern/src/unicode.rs": """
        pub struct Matcher;
        pub struct Options;
        pub struct Finder;

        impl Matcher {
            pub fn new() -> Self {
                Matcher
            }
        }

        pub fn escape(text: &str) -> String {
            text.to_string()
        }
        """,
    "pattern/src/spawn.rs": "pub fn spawn() {}\n",
    "pattern/src/text/mod.rs": "mod lines;\npub use self::lines::Lines;\npub use super::Matcher;\n",
    "pattern/src/text/lines.rs": "pub struct Lines;\n",
    "kernel/Cargo.toml": '[package]\nname = "kernel"\n',
    "kernel/src/lib.rs": "mod buffer;\npub use buffer::Buffer;\n",
    "kernel/src/buffer.rs": "pub struct Buffer {\n    bytes: Vec<u8>,\n}\n",
}


reexports = indexed_once("reexports", REEXPORTS)


@pytest.mark.parametrize(
    ("name", "file", "qualified"),
    [
        ("pattern::Matcher", "pattern/src/unicode.rs", "unicode::Matcher"),
        ("pattern::Matcher::new", "pattern/src/unicode.rs", "unicode::Matcher::new"),
        ("pattern::MatchOptions", "pattern/src/unicode.rs", "unicode::Options"),  # `as`
        ("pattern::escape", "pattern/src/unicode.rs", "unicode::escape"),
        ("pattern::unicode::escape", "pattern/src/unicode.rs", "unicode::escape"),  # `self`
        ("crate::Matcher", "pattern/src/unicode.rs", "unicode::Matcher"),
        ("pattern::bytes::Matcher", "pattern/src/lib.rs", "raw::Matcher"),  # an inline glob
        ("pattern::Finder", "pattern/src/unicode.rs", "unicode::Finder"),  # in `cfg_if!`
        ("pattern::text::Lines", "pattern/src/text/lines.rs", "text::lines::Lines"),  # 2018
        ("pattern::text::Matcher", "pattern/src/unicode.rs", "unicode::Matcher"),  # two hops
        # Another crate of the tree, named as `extern crate ... as` names it, then its own.
        ("pattern::Buffer", "kernel/src/buffer.rs", "buffer::Buffer"),
        ("kernel::Buffer", "kernel/src/buffer.rs", "buffer::Buffer"),
        # The function `pub use` makes public, not the private `mod spawn;` of the same name.
        ("pattern::spawn", "pattern/src/spawn.rs", "spawn::spawn"),
    ],
)
def test_rust_paths_follow_the_crates_reexports(
    reexports: Path, name: str, file: str, qualified: str
) -> None:
    path, _, found = shown(reexports, name)
    assert (path, found) == (file, qualified)


@pytest.mark.parametrize("name", ["pattern::Nothing", "pattern::bytes::Finder", "kernel::Matcher"])
def test_rust_reexports_lead_nowhere_else(reexports: Path, name: str) -> None:
    """Globs that re-export each other end; a glob takes only what its module has; a crate's
    re-exports are its own."""
    done = run_cli("show", name, "--root", reexports, "--no-refresh", timeout=60)
    assert done.returncode != 0 and f"no symbol named {name!r}" in done.stderr
    assert "Traceback" not in done.stderr


def test_rust_reexports_read_from_use_trees() -> None:
    from repomap.index.rust_paths import Reexport, reexports

    source = b"""
        use std::fmt;
        pub(crate) use a::{b::{C, D as E}, f::*, self as g};
        pub use ::ext::Thing as _;
        extern crate alloc as alloc_crate;
        pub mod inner {
            pub use super::x::Y;
            fn body() {
                pub use nowhere::Z;
            }
        }
        """
    assert reexports(source) == [
        Reexport((), "C", ("a", "b", "C")),
        Reexport((), "E", ("a", "b", "D")),
        Reexport((), None, ("a", "f")),
        Reexport((), "g", ("a",)),
        Reexport((), "alloc_crate", ("", "alloc")),
        Reexport(("inner",), "Y", ("super", "x", "Y")),
    ]


def test_a_root_that_is_a_package_starts_module_paths_with_its_name(tmp_path: Path) -> None:
    root = indexed(
        tmp_path / "toolkit",
        {"__init__.py": "from .core import Command\n", "core.py": "class Command: ...\n"},
    )
    assert shown(root, "toolkit.Command")[0] == "core.py"
    assert shown(root, "toolkit.core.Command")[0] == "core.py"


def test_a_module_turned_into_a_folder_is_passed_over(tmp_path: Path) -> None:
    """An index read without refreshing, a module's file now a folder: no traceback."""
    root = indexed(
        tmp_path / "repo", {"p/__init__.py": "from .k import K\n", "p/k.py": "class K: ...\n"}
    )
    (root / "p" / "__init__.py").unlink()
    (root / "p" / "__init__.py").mkdir()
    done = run_cli("show", "p.K", "--root", root, "--no-refresh")
    assert "Traceback" not in done.stderr


def test_a_member_a_base_class_defines_is_found_through_the_class(tmp_path: Path) -> None:
    """`show Square.area` where Square defines no `area` and its base Shape does (Python,
    bases through several levels, by path too; C++ base clauses)."""
    root = indexed(
        tmp_path / "repo",
        {
            "shapes/__init__.py": "from .square import Square\n",
            "shapes/base.py": (
                "class Shape:\n    def area(self):\n        return 0\n\n"
                "class Named:\n    def label(self):\n        return ''\n"
            ),
            "shapes/square.py": (
                "from .base import Named, Shape\n\n"
                "class Square(Shape, Named, metaclass=type):\n    def side(self):\n"
                "        return 1\n\nclass Cube(Square):\n    pass\n"
            ),
            "gui/widget.hpp": (
                "namespace gui {\nclass Widget {\n public:\n  void draw() {}\n};\n"
                "class Button : public Widget {\n};\n}\n"
            ),
        },
    )
    assert shown(root, "Square.area")[::2] == ("shapes/base.py", "Shape.area")
    assert shown(root, "Square.label")[::2] == ("shapes/base.py", "Named.label")
    assert shown(root, "Cube.area")[::2] == ("shapes/base.py", "Shape.area")  # two levels
    assert shown(root, "shapes.Square.area")[::2] == ("shapes/base.py", "Shape.area")
    assert shown(root, "gui::Button::draw")[::2] == ("gui/widget.hpp", "gui::Widget::draw")
    done = run_cli("show", "Square.volume", "--root", root)
    assert done.returncode == 1 and "no symbol named 'Square.volume'" in done.stderr


def test_base_names_read_from_signatures() -> None:
    from repomap.search.bases import base_names

    assert base_names("class Group(Command)", "python") == ["Command"]
    assert base_names("class A(Generic[T], core.Base, metaclass=ABCMeta)", "python") == [
        "Generic",
        "core.Base",
    ]
    assert base_names("class A", "python") == []
    assert base_names(
        "class logger : public std::enable_shared_from_this<logger>, private detail::Base",
        "cpp",
    ) == ["std::enable_shared_from_this", "detail::Base"]
    assert base_names("struct ns::Inner final : virtual public Outer", "cpp") == ["Outer"]
    assert base_names("class ns::Plain", "cpp") == []


def test_a_workspace_root_crate_does_not_take_its_members_reexports(tmp_path: Path) -> None:
    """A crate at the workspace's root: its files stop at a member's Cargo.toml, so the
    member's `pub use` is not the root crate's (`top::OnlyMember` named the member's item)."""
    root = indexed(
        tmp_path / "repo",
        {
            "Cargo.toml": '[package]\nname = "top"\n[workspace]\nmembers = ["member"]\n',
            "src/lib.rs": "pub mod a;\n",
            "src/a.rs": "pub struct A;\n",
            "member/Cargo.toml": '[package]\nname = "member"\n',
            "member/src/lib.rs": "mod inner;\npub use crate::inner::OnlyMember;\n",
            "member/src/inner.rs": "pub struct OnlyMember;\n",
        },
    )
    assert shown(root, "member::OnlyMember")[0] == "member/src/inner.rs"
    assert shown(root, "top::a::A")[0] == "src/a.rs"
    done = run_cli("show", "top::OnlyMember", "--root", root, "--no-refresh")
    assert done.returncode != 0 and "no symbol named 'top::OnlyMember'" in done.stderr


def test_a_crate_of_many_globs_answers_a_missing_name(tmp_path: Path) -> None:
    """3,000 `pub use mN::*;` at a crate's root: each module's re-exports are read once per
    lookup (they were read again for each glob: 20,000 took 25 s)."""
    globs = "".join(f"pub use m{n}::*;\n" for n in range(3000))
    root = indexed(
        tmp_path / "repo",
        {"Cargo.toml": '[package]\nname = "big"\n', "src/lib.rs": "pub struct Real;\n" + globs},
    )
    assert shown(root, "big::Real")[0] == "src/lib.rs"
    done = run_cli("show", "big::Nope", "--root", root, "--no-refresh", timeout=60)
    assert done.returncode != 0 and "no symbol named 'big::Nope'" in done.stderr

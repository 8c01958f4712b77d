"""`show` and `symbols` take a symbol's path as code writes it: a Python import path through its
module and the package that re-exports it, a Rust path from `crate::`, `self::` or the crate's
name. Real files in a temp dir, the real CLI in a subprocess, a real index."""

from __future__ import annotations

import json
from pathlib import Path

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


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_tree(tmp_path_factory.mktemp("written") / "repo", FILES)
    done = run_cli("index", root)
    assert done.returncode == 0, done.stderr
    return root


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
    root = write_tree(tmp_path / "repo", files)
    assert run_cli("index", root).returncode == 0
    assert shown(root, "fan.f97")[:1] == ("fan/m97.py",)
    assert shown(root, "fan.m3.f5")[:1] == ("fan/m5.py",)  # m3 -> m4 -> m5, or m3 -> m5
    done = run_cli("show", "fan.nothing", "--root", root, timeout=60)
    assert done.returncode != 0 and "no symbol named 'fan.nothing'" in done.stderr

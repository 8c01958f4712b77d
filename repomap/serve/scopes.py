"""Which index a request's `scope` names.

The default scope, `main`, is the indexes the server was started with (one per root). A
request without a scope, or with `"main"`, reads them. Another well-formed name is looked up
by `find` (a single-root server: the branch scope's index under `.repomap/scopes/<name>/`, as
repomap.toml's `scope.mode` places it, opened on first use); none there is NOT_FOUND, and a
malformed name INVALID_REQUEST.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from repomap.errors import BadArgument, NotFound
from repomap.serve.mcp_service import Service

DEFAULT_SCOPE = "main"
# A branch name as it is stored under .repomap/scopes/: letters, digits, and . _ - / inside.
SCOPE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,199}")


class UnknownScope(NotFound):
    """A well-formed scope this server holds no index for."""


@dataclass
class Scopes:
    """scope name -> the Service over that scope's indexes."""

    services: dict[str, Service] = field(default_factory=dict)
    # A scope not served yet -> its Service, or None when there is no index for it.
    find: Callable[[str], Service | None] = lambda name: None

    def resolve(self, name: str | None) -> tuple[str, Service]:
        """(the scope's name, its Service): no name is the default scope."""
        if name is None or name == "":
            name = DEFAULT_SCOPE
        if not SCOPE_NAME.fullmatch(name) or ".." in name:
            raise BadArgument(
                f"scope {name[:80]!r} is not a scope name (letters, digits, . _ - /, at most 200)"
            )
        service = self.services.get(name)
        if service is None:
            service = self.find(name)
            if service is not None:
                self.services[name] = service
        if service is None:
            raise UnknownScope(
                f"no scope {name!r} on this server; it serves: {', '.join(sorted(self.services))}"
            )
        return name, service

    def close(self) -> None:
        for service in self.services.values():
            service.close()

"""``replayssm-lint server``: a Language Server Protocol server (the optional ``lsp`` extra).

Every LSP editor then shows the CLI's findings while the user types, in every
file kind the CLI checks, with the ``fix`` planner's edits as quick fixes and
``explain`` as hover.  pygls and lsprotocol are imported only here, so the
base install does not need them.
"""

from __future__ import annotations

import sys

INSTALL_HINT = ('replayssm-lint server needs the "lsp" extra: pip install "pygls>=2,<3" "lsprotocol>=2025.0.0" '
                '(or ".[lsp]" in a clone; the README\'s Install section has every way)')


def run_server(tcp: str | None = None) -> int:
    """Serve on stdio (or ``HOST:PORT``) until the editor says exit; 2 when pygls is missing."""
    if tcp is not None:
        host, _, port = tcp.rpartition(":")
        if not port.isdigit():
            from ..escaping import shown

            print(f"replayssm-lint: error: --tcp wants HOST:PORT, not {shown(repr(tcp))}", file=sys.stderr)
            return 2
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError as exc:
        print(f"{INSTALL_HINT} ({exc})", file=sys.stderr)
        return 2
    from .server import serve

    return serve(tcp)

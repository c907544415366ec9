"""The HTTP control API (``mockbroker serve --admin-port``): ``AdminServer``, an aiohttp front end
over ``cluster.control``; docs/http.md is its reference. The package's modules are listed in
mockbroker/http/app.py."""

from mockbroker.http.app import DEFAULT_ADMIN_PORT, AdminServer

__all__ = ["DEFAULT_ADMIN_PORT", "AdminServer"]

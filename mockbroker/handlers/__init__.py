"""One thin module per API: ``handle(ctx, request)`` turns a decoded request into a response.

Which module serves which API and versions is the handler table (mockbroker.dispatch.table), which
imports each module on the first request of its API. Modules whose names start with ``_`` are shared
helpers: coordinator lookups, config alteration, the controller's topic admin checks.
"""

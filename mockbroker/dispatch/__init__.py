"""The request path between a connection and the handlers.

- ``context``: what a handler is given and may raise (RequestContext, CloseConnection), and the
  framing of answers kept by request bytes; handlers and control import it.
- ``table``: the handler table keyed by ApiKey (which module serves which versions), loading each
  handler module on the first request of its API.
- ``dispatch``: one request frame in, one framed answer out; failure mapping in one place.

Nothing is imported here, so that importing one part does not import the others.
"""

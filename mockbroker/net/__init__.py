"""The network side of a broker: listeners and connections (mockbroker.net.server), the only code
that touches sockets."""

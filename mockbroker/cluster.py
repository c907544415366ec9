"""MockCluster: the composition root. A ClusterState with its brokers' listeners and the control API.

One process, one event loop, N brokers each with its own listener (mockbroker.net.server), node id
and rack. What requests read and change is the ClusterState this class extends (mockbroker.state);
this module only builds the parts around it and starts and stops them. The wire handlers and the
Python API (tests, the CLI, the HTTP API) change the same state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mockbroker.clock import Clock
from mockbroker.config.cluster import ClusterConfig
from mockbroker.model import (
    OFFSETS_TOPIC as OFFSETS_TOPIC,
)
from mockbroker.model import (
    TRANSACTION_TOPIC as TRANSACTION_TOPIC,
)
from mockbroker.model import (
    BrokerNode as BrokerNode,
)
from mockbroker.model import (
    Partition as Partition,
)
from mockbroker.model import (
    Topic as Topic,
)
from mockbroker.model import (
    TopicError as TopicError,
)
from mockbroker.model import (
    validate_topic_name as validate_topic_name,
)
from mockbroker.state import ClusterState, Listener, RequestHooks

if TYPE_CHECKING:
    import ssl

    from mockbroker.control import Control
    from mockbroker.net.server import BrokerServer
    from mockbroker.security.tls import TlsMaterial


class MockCluster(ClusterState):
    """A cluster of in-memory brokers: ``await cluster.start()`` binds one listener per broker."""

    _control: Control | None = None

    def __init__(self, config: ClusterConfig | None = None, *, clock: Clock | None = None, **overrides: object) -> None:
        super().__init__(config, clock=clock, **overrides)
        self._servers: dict[int, BrokerServer] = {}
        self._generated_tls: TlsMaterial | None = None  # the certificates of listeners without a keystore

    # -- lifecycle --------------------------------------------------------------------------------

    async def start(self) -> MockCluster:
        from mockbroker.net.server import BrokerServer

        self.start_timers(self.clock.now_ms())
        ssl_contexts = {spec.name: self._ssl_context(spec.name) for spec in self.listener_specs if spec.tls}
        try:
            for node in self.brokers.values():
                server = BrokerServer(self, node, ssl_contexts)
                await server.start()
                self._servers[node.node_id] = server
        except BaseException:
            await self.stop()
            raise
        return self

    def _ssl_context(self, listener: str) -> ssl.SSLContext:
        """An SSL or SASL_SSL listener's context: its ssl.keystore.location's PEM (chain and key), or
        a throw-away CA and broker certificate for the advertised hosts (mockbroker/security/tls.py,
        one for every listener without a keystore), with its ssl.client.auth, ssl.key.password and
        ssl.truststore.location: each listener.name.<name>.<setting> where given, else the
        cluster's (Kafka's valuesWithPrefixOverride, key by key)."""
        from mockbroker.config.listeners import listener_setting, listener_ssl
        from mockbroker.security import tls

        config = self.config
        keystore, key_password, truststore = listener_ssl(config, listener)
        if keystore:
            material = tls.TlsMaterial(keystore, keystore, truststore)
        else:
            if self._generated_tls is None:
                hosts = {e.advertised_host for n in self.brokers.values() for e in n.endpoints.values()}
                hosts |= {spec.host for spec in self.listener_specs}
                self._generated_tls = tls.generate(sorted(h for h in hosts if h))
            material = self._generated_tls
        self.listener_tls[listener] = material
        if self.tls is None:  # the first TLS listener's: ssl_ca_path
            self.tls = material
        client_auth = listener_setting(config, listener, "ssl.client.auth", config.ssl_client_auth)
        return tls.server_context(material, client_auth, truststore, key_password)

    async def stop(self) -> None:
        for server in self._servers.values():
            await server.stop()
        self._servers.clear()
        self.timers.close()
        self.events.close()

    async def __aenter__(self) -> MockCluster:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- the parts ----------------------------------------------------------------------------------

    @property
    def listeners(self) -> Mapping[int, Listener]:
        return self._servers

    @property
    def control(self) -> Control:
        """The control and introspection API (mockbroker.control.Control), made on first use."""
        control = self._control
        if control is None:
            from mockbroker.control import Control

            control = self._control = Control(self)
        return control

    @property
    def request_hooks(self) -> RequestHooks:
        return self.control.hooks

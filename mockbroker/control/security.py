"""Control of security: the listener's protocol and TLS material, and SASL users (docs/security.md).

Users made here serve PLAIN and both SCRAM mechanisms at once (as ``sasl_users`` does at start).
Nothing here ever returns a password or a salted credential: a user is its name and mechanisms.
Each change records a ``control.user_*`` event (without the password)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mockbroker.control.base import ControlBase
from mockbroker.control.errors import ControlError, NotFound
from mockbroker.security.oauthbearer import describe_validator


@dataclass(frozen=True, slots=True)
class ListenerSecurity:
    """One listener: its name, security protocol, what it serves and its bootstrap servers."""

    name: str  # the listener's name (listeners)
    security_protocol: str  # PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
    sasl_mechanisms: tuple[str, ...]  # served on SASL listeners (listener.name.<name>.sasl.enabled.mechanisms)
    ssl_client_auth: str  # on SSL and SASL_SSL listeners (listener.name.<name>.ssl.client.auth)
    bootstrap_servers: str  # host:port of every broker on this listener
    # The PEM file of the CA its clients trust (listener.name.<name>.ssl.keystore.location's
    # truststore, else the cluster's); None on a listener without TLS.
    ssl_ca_path: str | None = None
    # KIP-368 on this listener (listener.name.<name>.connections.max.reauth.ms, else the cluster's),
    # and each mechanism's own where listener.name.<name>.<mechanism>.connections.max.reauth.ms gives one.
    connections_max_reauth_ms: int = 0
    connections_max_reauth_ms_by_mechanism: dict[str, int] = field(default_factory=dict)
    max_connections: int = 2147483647  # listener.name.<name>.max.connections, else max.connections


@dataclass(frozen=True, slots=True)
class SecuritySnapshot:
    listener: str  # the first listener's name (listeners)
    security_protocol: str  # its security protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
    sasl_mechanisms: tuple[str, ...]  # sasl.enabled.mechanisms (served on SASL listeners)
    ssl_ca_path: str | None  # the PEM file of the CA clients trust, on SSL and SASL_SSL listeners
    ssl_client_auth: str  # ssl.client.auth
    connections_max_reauth_ms: int  # connections.max.reauth.ms (KIP-368; 0: none)
    # OAUTHBEARER's validator when the mechanism is enabled: "unsecured" and its options, or the
    # pluggable callable's name (mockbroker.security.oauthbearer.describe_validator)
    oauthbearer: dict[str, Any] | None
    listeners: tuple[ListenerSecurity, ...] = ()  # every listener, in the order of `listeners`


class SecurityControl(ControlBase):
    async def describe_security(self) -> SecuritySnapshot:
        c = self.cluster
        validator = c.oauth_validator
        listeners = tuple(self._listener_security(spec.name, spec.security_protocol) for spec in c.listener_specs)
        return SecuritySnapshot(
            c.listener.name, c.listener.security_protocol, c.sasl_mechanisms, c.ssl_ca_path, c.config.ssl_client_auth,
            c.config.connections_max_reauth_ms,
            None if validator is None else describe_validator(validator),
            listeners,
        )

    def _listener_security(self, name: str, protocol: str) -> ListenerSecurity:
        from mockbroker.config.listeners import (
            connections_max_reauth_ms,
            listener_max_connections,
            listener_setting,
        )

        c = self.cluster
        mechanisms = c.listener_mechanisms[name]
        reauth_ms = connections_max_reauth_ms(c.config, name, None)
        by_mechanism = {m: connections_max_reauth_ms(c.config, name, m) for m in mechanisms}
        return ListenerSecurity(
            name, protocol, mechanisms,
            listener_setting(c.config, name, "ssl.client.auth", c.config.ssl_client_auth),
            c.bootstrap_servers_for(name),
            c.ssl_ca_path_for(name),
            reauth_ms,
            {m: ms for m, ms in by_mechanism.items() if ms != reauth_ms},
            listener_max_connections(c.config, name),
        )

    async def users(self) -> dict[str, list[str]]:
        """SASL users and the mechanisms each can use (never a password)."""
        return self.cluster.credentials.users()

    async def add_user(self, user: str, password: str, reason: str | None = None) -> None:
        """Make (or replace) ``user`` for PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512."""
        if not user or not password:
            raise ControlError("a user needs a name and a non-empty password")
        self.cluster.credentials.add_user(user, password)
        self.cluster.events.record("control.user_added", reason=reason, user=user)

    async def remove_user(self, user: str, reason: str | None = None) -> None:
        """Forget every credential of ``user`` (connections already authenticated stay)."""
        if not self.cluster.credentials.remove_user(user):
            raise NotFound(f"no user {user!r}")
        self.cluster.events.record("control.user_removed", reason=reason, user=user)

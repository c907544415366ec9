"""SaslAuthenticate (key 36), v0-2: one SASL token of the exchange (KIP-152); v1 adds the
session lifetime (KIP-368: the least of ``connections.max.reauth.ms``, the listener's or the
listener and mechanism's where given, and the credential's remaining life, 0 when neither is
set), v2 is flexible.

The connection's authenticator evaluates the token (SaslServerAuthenticator.handleSaslToken,
mockbroker/security/sasl.py). A refused token gets SASL_AUTHENTICATION_FAILED with Kafka's message
(PLAIN's own "Authentication failed: Invalid username or password"; SCRAM's generic "...due to
invalid credentials with SASL mechanism ...") and the connection closes after the answer. Before a
v1 handshake the request is out of place ("Unexpected Kafka request of type SASL_AUTHENTICATE
during SASL handshake.": the connection closes, as dispatch closes it for any other API). On a
listener without SASL or after authentication it reaches KafkaApis: ILLEGAL_SASL_STATE.
OAUTHBEARER's refused token is answered NONE with the JSON challenge as the server's token; the
client's %x01 that follows fails the exchange with that JSON as the message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.clock import client_clock_ms
from mockbroker.config.listeners import connections_max_reauth_ms
from mockbroker.dispatch.context import CloseConnection
from mockbroker.security.sasl import OAuthBearerChallenge, SaslAbort, SaslFailure
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.sasl_authenticate import SaslAuthenticateRequest, SaslAuthenticateResponse

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.SASL_AUTHENTICATE
VERSIONS = (0, 2)


async def handle(ctx: RequestContext, req: SaslAuthenticateRequest) -> SaslAuthenticateResponse:
    session = ctx.session
    if session is None or session.authenticated:
        return SaslAuthenticateResponse(
            error_code=ErrorCode.ILLEGAL_SASL_STATE,
            error_message="SaslAuthenticate request received after successful authentication",
        )
    if session.state not in ("AUTHENTICATE", "REAUTH_BAD_MECHANISM"):
        raise CloseConnection("Unexpected Kafka request of type SASL_AUTHENTICATE during SASL handshake.")
    cluster = ctx.cluster
    events, client = cluster.events, f"{ctx.client_host}:{ctx.client_port}"
    reauthenticating = session.reauthenticating
    try:
        token = session.authenticate(bytes(req.auth_bytes), cluster.credentials, client_clock_ms(cluster.clock, ctx.now_ms))
    except SaslFailure as failure:
        events.record(
            "authentication.failed", broker_id=ctx.broker.node_id, reason=failure.reason, client=client, mechanism=session.mechanism
        )
        return SaslAuthenticateResponse(error_code=ErrorCode.SASL_AUTHENTICATION_FAILED, error_message=failure.client_message)
    except SaslAbort as abort:
        events.record("authentication.failed", broker_id=ctx.broker.node_id, reason=abort.reason, client=client, mechanism=session.mechanism)
        raise CloseConnection(abort.reason) from None
    except OAuthBearerChallenge as challenge:
        events.record(
            "authentication.failed", broker_id=ctx.broker.node_id, reason=challenge.reason, client=client, mechanism=session.mechanism
        )
        return SaslAuthenticateResponse(error_code=ErrorCode.NONE, error_message="", auth_bytes=challenge.challenge.encode())
    lifetime = 0
    if session.authenticated:
        wall_ms = client_clock_ms(cluster.clock, ctx.now_ms)
        max_reauth_ms = connections_max_reauth_ms(cluster.config, ctx.listener or cluster.listener.name, session.mechanism)
        lifetime = session.complete(ctx.now_ms, wall_ms, max_reauth_ms)
        events.record(
            "authentication.succeeded",
            broker_id=ctx.broker.node_id,
            principal=session.principal,
            client=client,
            mechanism=session.mechanism,
            reauthentication=reauthenticating,
            session_lifetime_ms=lifetime,
        )
    return SaslAuthenticateResponse(error_code=ErrorCode.NONE, error_message="", auth_bytes=token, session_lifetime_ms=lifetime)

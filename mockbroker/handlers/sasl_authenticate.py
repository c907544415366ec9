"""SaslAuthenticate (key 36), v0-2: one SASL token of the exchange (KIP-152); v1 adds the
session lifetime (KIP-368: 0, no re-authentication required), v2 is flexible.

The connection's authenticator evaluates the token (SaslServerAuthenticator.handleSaslToken,
mockbroker/security/sasl.py). A refused token gets SASL_AUTHENTICATION_FAILED with Kafka's message
(PLAIN's own "Authentication failed: Invalid username or password"; SCRAM's generic "...due to
invalid credentials with SASL mechanism ...") and the connection closes after the answer. Before a
v1 handshake the request is out of place ("Unexpected Kafka request of type SASL_AUTHENTICATE
during SASL handshake.": the connection closes, as dispatch closes it for any other API). On a
listener without SASL or after authentication it reaches KafkaApis: ILLEGAL_SASL_STATE.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.dispatch.context import CloseConnection
from mockbroker.security.sasl import SaslFailure
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
    if session.state != "AUTHENTICATE":
        raise CloseConnection("Unexpected Kafka request of type SASL_AUTHENTICATE during SASL handshake.")
    events, client = ctx.cluster.events, f"{ctx.client_host}:{ctx.client_port}"
    try:
        token = session.authenticate(bytes(req.auth_bytes), ctx.cluster.credentials)
    except SaslFailure as failure:
        events.record(
            "authentication.failed", broker_id=ctx.broker.node_id, reason=failure.reason, client=client, mechanism=session.mechanism
        )
        return SaslAuthenticateResponse(error_code=ErrorCode.SASL_AUTHENTICATION_FAILED, error_message=failure.client_message)
    if session.authenticated:
        events.record(
            "authentication.succeeded", broker_id=ctx.broker.node_id, principal=session.principal, client=client, mechanism=session.mechanism
        )
    return SaslAuthenticateResponse(error_code=ErrorCode.NONE, error_message="", auth_bytes=token, session_lifetime_ms=0)

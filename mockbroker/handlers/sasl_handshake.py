"""SaslHandshake (key 17), v0-1: pick the SASL mechanism of a connection (KIP-43, KIP-152).

On a SASL listener before authentication the connection's authenticator answers
(SaslServerAuthenticator.handleHandshakeRequest, mockbroker/security/sasl.py): the mechanisms
enabled (``sasl.enabled.mechanisms``) and NONE, or UNSUPPORTED_SASL_MECHANISM and the connection
closes once the answer is out. v0 means the tokens follow raw, without Kafka headers; v1 that they
come in SaslAuthenticate requests. Anywhere else (a PLAINTEXT or SSL listener, or after
authentication) the request reaches KafkaApis.handleSaslHandshakeRequest: ILLEGAL_SASL_STATE.
On an authenticated connection whose session has an expiry (KIP-368: ``connections.max.reauth.ms``
or an OAUTHBEARER token's exp) it begins a re-authentication instead
(KafkaChannel.maybeBeginServerReauthentication), at most once a second.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.sasl_handshake import SaslHandshakeRequest, SaslHandshakeResponse

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.SASL_HANDSHAKE
VERSIONS = (0, 1)


async def handle(ctx: RequestContext, req: SaslHandshakeRequest) -> SaslHandshakeResponse:
    session = ctx.session
    if session is not None and session.authenticated:
        session.begin_reauthentication(ctx.now_ms)
    if session is None or session.state != "HANDSHAKE_OR_VERSIONS_REQUEST":
        if session is not None and not session.authenticated:
            # A second handshake in the middle of an exchange (handleSaslToken: "Unexpected Kafka
            # request of type SASL_HANDSHAKE during SASL authentication."): answered, then closed.
            session.state = "FAILED"
        return SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])
    enabled = list(session.enabled_mechanisms)  # in Kafka's order (security/sasl.py kafka_mechanism_order)
    if not session.handshake(req.mechanism, ctx.api_version):
        ctx.cluster.events.record(
            "authentication.failed",
            broker_id=ctx.broker.node_id,
            reason=f"Unsupported SASL mechanism {req.mechanism}",
            client=f"{ctx.client_host}:{ctx.client_port}",
            mechanism=req.mechanism,
        )
        return SaslHandshakeResponse(error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms=enabled)
    return SaslHandshakeResponse(error_code=ErrorCode.NONE, mechanisms=enabled)


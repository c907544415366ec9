"""The client audit: what every client does, checked from the broker's side while a scenario runs.

An ``Auditor`` is one interceptor (``intercept(None, auditor.observe, keep=True)``) on an embedded
mockbroker: it sees each request after decoding and, through ``After``, the response the client
is given. It never changes either. It runs on the broker's thread; read ``findings`` once the
scenario is over (``finish``). Checks:

- **heartbeat-interval**: a group member is heard from (Heartbeat, JoinGroup, SyncGroup,
  OffsetCommit; ConsumerGroupHeartbeat for KIP-848 members, StreamsGroupHeartbeat for KIP-1071
  ones) at least once per session timeout (its JoinGroup's SessionTimeoutMs;
  ``group.consumer.session.timeout.ms`` for KIP-848 members, ``group.streams.session.timeout.ms``
  for KIP-1071 ones),
  from joining until it leaves or the broker tells it it is gone (UNKNOWN_MEMBER_ID,
  FENCED_MEMBER_EPOCH, FENCED_INSTANCE_ID). A client the scenario killed on purpose is excused.
- **commit-generation**: an OffsetCommit carries the member's current generation (classic: never
  one older than a generation the member already completed with SyncGroup; KIP-848 and KIP-1071:
  never a member epoch older than one a Consumer- or StreamsGroupHeartbeat already gave it).
- **api-version**: every request's version is inside the range ApiVersions advertised on that
  connection (or, on a connection that never asked, the range the broker advertises).
- **coordinator**: after a NOT_COORDINATOR answer for a group, the client does not send that
  request (the same API) for that group to that broker again until it has looked the coordinator
  up again (FindCoordinator); other APIs in flight at the same time are not held against it;
  a request that arrives at most ``COORDINATOR_GRACE_MS`` before the lookup is let go (the two
  may travel on different connections at once).
- **member-id-required**: after JoinGroup answers MEMBER_ID_REQUIRED (KIP-394), the client's next
  JoinGroup for that group carries the member id it was given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mockbroker.intercept import After, Intercepted
from mockbroker_conformance.model import Finding
from mockbroker_protocol.errors import ErrorCode

API_VERSIONS, JOIN_GROUP, SYNC_GROUP, HEARTBEAT, LEAVE_GROUP = 18, 11, 14, 12, 13
OFFSET_COMMIT, OFFSET_FETCH, FIND_COORDINATOR, CONSUMER_GROUP_HEARTBEAT = 8, 9, 10, 68
STREAMS_GROUP_HEARTBEAT = 88
# The broker-driven heartbeats (KIP-848, KIP-1071): the member's epoch, -1 to leave, -2 a static leave.
EPOCH_HEARTBEATS = frozenset({CONSUMER_GROUP_HEARTBEAT, STREAMS_GROUP_HEARTBEAT})
GROUP_APIS = frozenset({JOIN_GROUP, SYNC_GROUP, HEARTBEAT, LEAVE_GROUP, OFFSET_COMMIT, OFFSET_FETCH, *EPOCH_HEARTBEATS})
# Answers after which a member id is no longer in the group, so its silence is no violation.
GONE = frozenset({int(ErrorCode.UNKNOWN_MEMBER_ID), int(ErrorCode.FENCED_MEMBER_EPOCH), int(ErrorCode.FENCED_INSTANCE_ID)})
NOT_COORDINATOR = int(ErrorCode.NOT_COORDINATOR)
MEMBER_ID_REQUIRED = int(ErrorCode.MEMBER_ID_REQUIRED)
# A request to the refusing coordinator this close before the client's lookup arrives may have been
# sent while the lookup was already on its way (on another connection): not counted.
COORDINATOR_GRACE_MS = 500


@dataclass
class _Member:
    client_id: str
    session_timeout_ms: int
    last_ms: int
    last_request: dict[str, Any]
    instance_id: str | None = None
    gone: bool = False
    synced_generation: int = -1  # classic: the newest generation completed with SyncGroup
    epoch: int = -1  # KIP-848, KIP-1071: the newest member epoch a heartbeat answer gave it


@dataclass
class Auditor:
    """Findings per client id, from one cluster's requests (see the module's docstring)."""

    consumer_session_timeout_ms: int = 10_000
    streams_session_timeout_ms: int = 10_000
    findings: list[Finding] = field(default_factory=list)
    excused: set[str] = field(default_factory=set)
    members: dict[tuple[str, str], _Member] = field(default_factory=dict)  # (group, member id)
    _advertised: dict[tuple[str, int], dict[int, tuple[int, int]]] = field(default_factory=dict)
    _not_coordinator: dict[tuple[str, str], tuple[int, dict[str, Any]]] = field(default_factory=dict)
    _reported_coordinator: set[tuple[str, str, int]] = field(default_factory=set)
    _member_id_required: dict[tuple[str, str], str] = field(default_factory=dict)
    _suspects: list[tuple[str, str, int, Finding]] = field(default_factory=list)
    requests_seen: int = 0

    def excuse(self, client_id: str) -> None:
        """This client was stopped on purpose (killed): its silence is the scenario's doing. The
        id is also a prefix: Kafka Streams names its clients ``<client.id>-StreamThread-1-consumer``..."""
        self.excused.add(client_id)

    def _is_excused(self, client_id: str) -> bool:
        return client_id in self.excused or any(client_id.startswith(f"{e}-") for e in self.excused)

    def finish(self, now_ms: int) -> list[Finding]:
        """Members still in their group, silent for longer than their session timeout at the end,
        and requests to a refusing coordinator never followed by a lookup within the grace period."""
        self.findings += [finding for _c, _g, _at, finding in self._suspects]
        self._suspects = []
        for (group, member_id), m in self.members.items():
            # >=: the broker expires a member once a full session timeout has passed since it last
            # heard from it (deadline = last + timeout), so a check run right at that expiry sees a
            # silence of exactly the timeout, in whole milliseconds.
            if not m.gone and not self._is_excused(m.client_id) and now_ms - m.last_ms >= m.session_timeout_ms:
                self._find(
                    "heartbeat-interval", m.client_id,
                    f"member {member_id} of group {group} silent for {now_ms - m.last_ms} ms at the end of the "
                    f"scenario, more than its session timeout of {m.session_timeout_ms} ms",
                    m.last_request,
                )  # fmt: skip
                m.gone = True
        return self.findings

    # -- the interceptor ---------------------------------------------------------------------------

    def observe(self, seen: Intercepted) -> After | None:
        self.requests_seen += 1
        key, request, ctx = seen.api_key, seen.request, seen.ctx
        client = seen.client_id
        info = _describe(seen)
        conn = (ctx.client_host, ctx.client_port)
        if key != API_VERSIONS:
            self._check_version(seen, conn, info)
        group = _group_of(key, request)
        if key == FIND_COORDINATOR:
            for g in request.coordinator_keys or [request.key]:
                self._lookup(client, g, seen.now_ms)
        elif group is not None:
            self._check_coordinator(client, group, seen.broker_id, info)
            self._contact(key, request, group, seen.now_ms, info)
        if key == JOIN_GROUP and group is not None:
            wanted = self._member_id_required.pop((client, group), None)
            if wanted is not None and request.member_id != wanted:
                self._find(
                    "member-id-required", client,
                    f"JoinGroup for {group} with member id {request.member_id!r} after MEMBER_ID_REQUIRED gave it {wanted!r}",
                    info,
                )  # fmt: skip
        if key == OFFSET_COMMIT and group is not None:
            self._check_commit(client, group, request, info)

        def answered(response: Any) -> None:
            self._answered(key, request, response, client, group, conn, seen.broker_id, info, seen.ctx.cluster.clock.now_ms())

        return After(answered)

    # -- checks ------------------------------------------------------------------------------------

    def _find(self, check: str, client_id: str, message: str, info: dict[str, Any]) -> None:
        self.findings.append(Finding(check, client_id, message, dict(info)))

    def _check_version(self, seen: Intercepted, conn: tuple[str, int], info: dict[str, Any]) -> None:
        advertised = self._advertised.get(conn)
        if advertised is not None:
            lo_hi = advertised.get(seen.api_key)
            source = "this connection's ApiVersions answer"
        else:
            from mockbroker.dispatch.table import HANDLERS, advertised_versions

            handler = HANDLERS.get(seen.api_key)
            lo_hi = None if handler is None else advertised_versions(seen.ctx.cluster, handler)
            source = "what the broker advertises (the client never asked on this connection)"
        if lo_hi is None:
            self._find("api-version", seen.client_id, f"{seen.api_name} v{seen.api_version}: not advertised by {source}", info)
        elif not lo_hi[0] <= seen.api_version <= lo_hi[1]:
            self._find(
                "api-version", seen.client_id,
                f"{seen.api_name} v{seen.api_version} is outside {lo_hi[0]}-{lo_hi[1]}, {source}", info,
            )  # fmt: skip

    def _check_coordinator(self, client: str, group: str, broker: int, info: dict[str, Any]) -> None:
        refused = self._not_coordinator.get((client, group))
        if refused is None or refused[0] != broker or (client, group, broker) in self._reported_coordinator:
            return
        if refused[1].get("api") != info["api"]:
            # Another API's request (a heartbeat loop's Heartbeat while the refused OffsetCommit
            # is being handled, say) was issued concurrently by another part of the client: whether
            # it leaves before the lookup is timing, and the old coordinator refuses it too. What
            # ignores NOT_COORDINATOR is the refused request sent again without a lookup.
            return
        self._reported_coordinator.add((client, group, broker))
        message = (
            f"{info['api']} for {group} to broker {broker} after that broker answered NOT_COORDINATOR "
            f"(to its {refused[1].get('api')}, correlation id {refused[1].get('correlation_id')}) and before any FindCoordinator"
        )
        # Held back for COORDINATOR_GRACE_MS: a lookup the client sent on another connection at the
        # same time may reach the broker just after this request. Then it is no violation.
        self._suspects.append((client, group, info["time_ms"], Finding("coordinator", client, message, dict(info))))

    def _lookup(self, client: str, group: str, now_ms: int) -> None:
        """A FindCoordinator: suspects of this client and group within the grace period are cleared;
        older ones become findings."""
        self._not_coordinator.pop((client, group), None)
        keep = []
        for suspect in self._suspects:
            c, g, at, finding = suspect
            if c == client and g == group:
                if now_ms - at > COORDINATOR_GRACE_MS:
                    self.findings.append(finding)
            else:
                keep.append(suspect)
        self._suspects = keep

    def _contact(self, key: int, request: Any, group: str, now_ms: int, info: dict[str, Any]) -> None:
        member_id = getattr(request, "member_id", "") or ""
        if key == LEAVE_GROUP:
            ids = [m.member_id for m in request.members] or [request.member_id]
            for mid in ids:
                if (group, mid) in self.members:
                    self.members[(group, mid)].gone = True
            return
        m = self.members.get((group, member_id))
        if m is None or m.gone:
            return
        gap = now_ms - m.last_ms
        if gap > m.session_timeout_ms and not self._is_excused(m.client_id):
            self._find(
                "heartbeat-interval", m.client_id,
                f"member {member_id} of group {group} silent for {gap} ms, more than its session timeout of "
                f"{m.session_timeout_ms} ms (last heard: {m.last_request.get('api')} correlation id {m.last_request.get('correlation_id')})",
                info,
            )  # fmt: skip
        m.last_ms, m.last_request = now_ms, info
        if key in EPOCH_HEARTBEATS and request.member_epoch < 0:
            m.gone = True  # leaving (-1) or a static member's temporary leave (-2)

    def _check_commit(self, client: str, group: str, request: Any, info: dict[str, Any]) -> None:
        m = self.members.get((group, request.member_id))
        if m is None or request.generation_id_or_member_epoch < 0:
            return  # a commit outside a group generation (simple consumer), or an unknown member
        sent = request.generation_id_or_member_epoch
        current = m.epoch if m.epoch >= 0 else m.synced_generation
        if current >= 0 and sent < current:
            kind = "member epoch" if m.epoch >= 0 else "generation"
            self._find(
                "commit-generation", client,
                f"OffsetCommit for {group} with {kind} {sent} from member {request.member_id}, which already "
                f"had {kind} {current}",
                info,
            )  # fmt: skip

    def _answered(
        self, key: int, request: Any, response: Any, client: str, group: str | None,
        conn: tuple[str, int], broker: int, info: dict[str, Any], now_ms: int,
    ) -> None:  # fmt: skip
        if response is None:
            return
        if key == API_VERSIONS and response.error_code == 0:
            self._advertised[conn] = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
            return
        if group is None:
            return
        codes = _codes(response)
        if NOT_COORDINATOR in codes:
            self._not_coordinator[(client, group)] = (broker, info)
            self._reported_coordinator.discard((client, group, broker))
        if key == JOIN_GROUP:
            if response.error_code == MEMBER_ID_REQUIRED:
                self._member_id_required[(client, group)] = response.member_id
            elif response.error_code == 0:
                old = self.members.get((group, response.member_id))
                instance = getattr(request, "group_instance_id", None)
                self._replace_static(group, instance, response.member_id)
                self.members[(group, response.member_id)] = _Member(
                    client, request.session_timeout_ms, now_ms, info, instance,
                    synced_generation=old.synced_generation if old else -1,
                )  # fmt: skip
        elif key == SYNC_GROUP and response.error_code == 0:
            m = self.members.get((group, request.member_id))
            if m is not None:
                m.synced_generation = max(m.synced_generation, request.generation_id)
        elif key in EPOCH_HEARTBEATS and response.error_code == 0 and response.member_id:
            m = self.members.get((group, response.member_id))
            if m is None and request.member_epoch >= 0:
                self._replace_static(group, request.instance_id, response.member_id)
                timeout = self.consumer_session_timeout_ms if key == CONSUMER_GROUP_HEARTBEAT else self.streams_session_timeout_ms
                m = self.members[(group, response.member_id)] = _Member(client, timeout, now_ms, info, request.instance_id)
            if m is not None:
                m.epoch = max(m.epoch, response.member_epoch)
        if codes & GONE:
            member_id = getattr(request, "member_id", "") or ""
            if (group, member_id) in self.members:
                self.members[(group, member_id)].gone = True


    def _replace_static(self, group: str, instance_id: str | None, member_id: str) -> None:
        """A static member rejoining under a new member id replaces the old one (KIP-345)."""
        if instance_id is None:
            return
        for (g, mid), m in self.members.items():
            if g == group and m.instance_id == instance_id and mid != member_id:
                m.gone = True


def _codes(response: Any) -> set[int]:
    from mockbroker.intercept import error_codes

    return set(error_codes(response))


def _group_of(key: int, request: Any) -> str | None:
    if key not in GROUP_APIS:
        return None
    if key == OFFSET_FETCH and not request.group_id and request.groups:
        return str(request.groups[0].group_id)
    return str(request.group_id)


def _describe(seen: Intercepted) -> dict[str, Any]:
    """The request, as a finding shows it: where, when, and the group fields that matter."""
    info: dict[str, Any] = {
        "api": seen.api_name, "version": seen.api_version, "broker": seen.broker_id,
        "correlation_id": seen.correlation_id, "time_ms": seen.now_ms,
    }  # fmt: skip
    for name in ("group_id", "member_id", "generation_id", "generation_id_or_member_epoch", "member_epoch", "group_instance_id", "session_timeout_ms"):
        value = getattr(seen.request, name, None)
        if value not in (None, ""):
            info[name] = value
    return info

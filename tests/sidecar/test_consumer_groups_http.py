"""KIP-848 consumer groups over the HTTP control API, with a served broker (`mockbroker serve
--admin-port`) and real confluent-kafka (librdkafka) consumers with group.protocol=consumer,
each in its own process (tests/integration/clients/group_member.py), next to a classic group.

- described and waited on (`reconciled=true`): the broker's view, checked against the served
  OpenAPI document by jsonschema (a validator independent of the server's own), and each client's
  own rebalance callbacks reporting what the broker assigned it;
- listed with the classic group, by type (`GET /groups`, `mockbroker ctl groups list`), and
  counted by type and state in `/metrics`;
- a member expired over HTTP: fenced with cause session_timeout, the client loses its partitions
  (its on_lost callback), rejoins and is reconciled again at a later group epoch;
- a forced rebalance: a new group epoch every member reconciles to;
- the wait's refusals: reconciled on a classic group (409), a state the type does not have (422).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from mockbroker.ctl import Client, CtlError
from tests.integration.groups_support import Member, Members
from tests.integration.support import DEADLINE_S, wait_for
from tests.sidecar.support import Sidecar, conforms, ctl_json

GROUP, CLASSIC_GROUP, TOPIC, PARTITIONS = "kip848-http", "classic-http", "orders", 6
WAIT_S = int(DEADLINE_S)


@pytest.fixture
def served(sidecar: Any) -> Sidecar:
    # Members learn of a new target at their next heartbeat: a short interval keeps the test quick.
    side: Sidecar = sidecar("--topic", f"{TOPIC}:{PARTITIONS}", "--set", "group.consumer.heartbeat.interval.ms=200")
    return side


@pytest.fixture
def members(served: Sidecar) -> Iterator[Members]:
    with Members(SimpleNamespace(bootstrap_servers=served.bootstrap), GROUP, TOPIC) as started:  # type: ignore[arg-type]
        yield started


class Http:
    """The API's answers, each checked against the served document's schema for it."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.doc: dict[str, Any] = client.request("GET", "/openapi.json")

    def get(self, path: str, **query: Any) -> Any:
        body = self.client.request("GET", path, query=query)
        return conforms(self.doc, self._schema("get", path), body)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        answer = self.client.request("POST", path, body)
        return conforms(self.doc, self._schema("post", path), answer)

    def refused(self, path: str, **query: Any) -> tuple[int, dict[str, Any]]:
        status, body = self.client.raw("GET", path, query=query)
        assert status >= 400, (path, query, status, body)
        return status, conforms(self.doc, {"$ref": "#/components/schemas/Error"}, body)

    def _schema(self, method: str, path: str) -> dict[str, Any]:
        for template, methods in self.doc["paths"].items():
            if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path) and method in methods:
                responses = methods[method]["responses"]
                ok = next(code for code in responses if code.startswith("2"))
                schema: dict[str, Any] = responses[ok]["content"]["application/json"]["schema"]
                return schema
        raise AssertionError(f"{method} {path} is not in the document")


def reconciled(http: Http, members: list[Member], **query: Any) -> dict[str, Any]:
    """The group reconciled with these members (over HTTP), then each client's callbacks
    reporting what the broker assigned it."""
    group = http.get(f"/groups/{GROUP}/wait", members=len(members), reconciled="true", type="consumer", timeout=WAIT_S, **query)
    assert (group["type"], group["state"], group["reconciled"]) == ("consumer", "Stable", True), group
    assert group["assignment_epoch"] == group["group_epoch"] and group["subscribed_topics"] == {TOPIC: PARTITIONS}
    by_client = {m["client_id"]: m for m in group["members"]}
    assert set(by_client) == {m.client_id for m in members}
    owned = sorted(p for m in group["members"] for p in m["assigned"].get(TOPIC, []))
    assert owned == list(range(PARTITIONS)), group
    for m in group["members"]:
        assert (m["state"], m["member_epoch"], m["pending_revocation"]) == ("STABLE", group["group_epoch"], {}), m
        assert m["assigned"] == m["target"] and m["subscribed_topic_names"] == [TOPIC]
    for member in members:
        given = frozenset(by_client[member.client_id]["assigned"].get(TOPIC, []))
        wait_for(
            lambda member=member, given=given: member.assignment == given,  # type: ignore[misc]
            f"{member.client_id}'s callbacks to report {sorted(given)}",
            member.explain,
        )
    return group


def test_a_consumer_group_described_waited_on_listed_counted_and_expired_over_http(served: Sidecar, members: Members) -> None:
    http = Http(Client(served.admin, timeout=WAIT_S + 30))
    started = [members.start("confluent", f"c{i}", group_protocol="consumer") for i in range(3)]
    # A classic group on the same topic, for the listings (stopped with the others).
    classic = Member("confluent", served.bootstrap, CLASSIC_GROUP, TOPIC, "k0")
    members.started.append(classic)
    classic.start()
    group = reconciled(http, started)
    assert group["assignor"] == "uniform" and sorted(len(m["assigned"][TOPIC]) for m in group["members"]) == [2, 2, 2]
    assert http.get(f"/groups/{GROUP}") == group

    # Listed with the classic group, each with its type; filtered by type and state.
    http.get(f"/groups/{CLASSIC_GROUP}/wait", state="Stable", members=1, type="classic", timeout=WAIT_S)
    listed = {g["group_id"]: g for g in http.get("/groups")["groups"]}
    assert listed[GROUP] == {
        "group_id": GROUP, "type": "consumer", "state": "Stable", "generation_id": group["group_epoch"],
        "protocol_type": "consumer", "members": 3,
    }  # fmt: skip
    assert (listed[CLASSIC_GROUP]["type"], listed[CLASSIC_GROUP]["members"]) == ("classic", 1)
    assert [g["group_id"] for g in http.get("/groups", type="consumer")["groups"]] == [GROUP]
    assert [g["group_id"] for g in http.get("/groups", type="classic", state="Stable")["groups"]] == [CLASSIC_GROUP]
    assert http.get("/groups", state="Assigning")["groups"] == []
    env = {"MOCKBROKER_ADMIN_URL": served.admin}
    assert {(g["group_id"], g["type"]) for g in ctl_json(["groups", "list"], env)["groups"]} == {
        (GROUP, "consumer"), (CLASSIC_GROUP, "classic"),
    }  # fmt: skip
    assert [g["group_id"] for g in ctl_json(["groups", "list", "--type", "classic"], env)["groups"]] == [CLASSIC_GROUP]
    waited = ctl_json(["groups", "wait", GROUP, "--reconciled", "--type", "consumer", "--members", "3"], env)
    assert (waited["type"], waited["reconciled"]) == ("consumer", True)

    # Counted by type and state; a consumer group's rebalances are its group epoch bumps.
    text = served_metrics(http.client)
    assert sample(text, "mockbroker_groups", type="consumer", state="Stable") == 1
    assert sample(text, "mockbroker_groups", type="classic", state="Stable") == 1
    assert sample(text, "mockbroker_groups", type="consumer", state="Assigning") == 0  # every state of each type is listed
    assert sample(text, "mockbroker_group_members", group=GROUP, type="consumer") == 3
    assert sample(text, "mockbroker_rebalances_total", group=GROUP, type="consumer") >= 3  # one bump per join at least
    assert sample(text, "mockbroker_rebalances_total", group=CLASSIC_GROUP, type="classic") >= 1

    # Expire c0's session over HTTP: it is fenced, loses its partitions, rejoins, and is reconciled again.
    victim = started[0]
    victim_entry = next(m for m in group["members"] if m["client_id"] == victim.client_id)
    since, mark = http.get("/events", limit=1)["last_seq"], victim.mark()
    expired = http.post(f"/groups/{GROUP}/expire", {"client_id": victim.client_id})
    assert expired == {"member_id": victim_entry["member_id"]}
    fenced = http.get("/events/wait", type="consumer_group.member_fenced", group_id=GROUP, since_seq=since, timeout=WAIT_S)
    assert (fenced["member_id"], fenced["details"]["cause"]) == (victim_entry["member_id"], "session_timeout")
    lost = victim.wait_event("lost", since=mark)
    assert sorted(lost["removed"]) == victim_entry["assigned"][TOPIC] and lost["assignment"] == []
    after = reconciled(http, started, generation_at_least=group["group_epoch"] + 2)
    assert victim.of("assigned", since=mark), victim.explain()

    # A forced rebalance: a new group epoch (and target) that every member reconciles to.
    assert http.post(f"/groups/{GROUP}/rebalance", {"reason": "test"}) == {"state": "Reconciling"}
    forced = reconciled(http, started, generation_at_least=after["group_epoch"] + 1)
    assert forced["group_epoch"] == after["group_epoch"] + 1

    # The wait's refusals, each an Error the document describes.
    status, answer = http.refused(f"/groups/{CLASSIC_GROUP}/wait", reconciled="true", timeout=1)
    assert status == 409 and "classic group" in answer["error"]
    status, answer = http.refused(f"/groups/{GROUP}/wait", type="classic", state="Assigning")
    assert (status, answer["field"]) == (422, "query.state")
    status, answer = http.refused(f"/groups/{GROUP}/wait", type="classic", timeout=0)
    assert status == 408 and f"classic {GROUP}" in answer["error"]
    with pytest.raises(CtlError, match="HTTP 404"):
        http.client.request("POST", f"/groups/{GROUP}/expire", {"client_id": "nobody"})


def served_metrics(client: Client) -> str:
    status, text = client.raw("GET", "/metrics")
    assert status == 200 and isinstance(text, str), (status, text)
    return text


def sample(text: str, name: str, **labels: str) -> float:
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    for line in text.splitlines():
        if line.startswith(f"{name}{{{want}}} "):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no sample {name}{{{want}}} in\n{text}")

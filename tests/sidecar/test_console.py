"""The web console (`/ui`, mockbroker/http/console.py and ui/) in Debian's Chromium, driven by
Playwright for Python (executable_path: no browser download), against a served broker with real
kafka-python consumers in a classic group (tests/integration/clients/group_member.py processes).

- with a token, the page loads but asks for it (its data calls get 401 like any other); once
  entered, every call carries it, the event stream included;
- the group page shows the group Stable, its generation and the assignment matrix (members x
  partitions) as the broker stored it;
- expiring a member from the page (keyboard only) makes the timeline show the rebalance, with the
  expiry as its trigger, and the matrix change: the expired member id is gone and the group forms
  again without reloading the page (the event stream drives it);
- a record produced from the topic page is consumed by a real consumer of the group, and browsed
  back on the page;
- every request the page makes goes to the broker's own server, to an endpoint of the OpenAPI
  document (and, statically, every call in the JavaScript names one);
- a KIP-848 consumer group (confluent-kafka) shows its epochs and owned partitions, and a
  rebalance forced from the page appears in the timeline with its reason as the trigger;
- a manual clock advanced, errors pushed and cleared, the request log turned on from the pages;
- screenshots of each page go to build/console/ (CI keeps them as artifacts).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit
from urllib.request import urlopen

import pytest

from mockbroker.http.console import assets
from tests.conftest import in_ci
from tests.integration.groups_support import Members
from tests.integration.support import DEADLINE_S, wait_for
from tests.sidecar.support import Sidecar

GROUP, TOPIC, PARTITIONS, TOKEN = "console-app", "orders", 4, "console-secret"
SHOTS = Path(__file__).resolve().parents[2] / "build" / "console"
WAIT_MS = DEADLINE_S * 1000
API_WAIT_S = 25  # the API's own waits: within the test client's 30 s timeout (Sidecar.client)
# api.get("/groups/{group_id}", ...): every call of the console's JavaScript names its template.
CALL = re.compile(r"\bapi\.(get|post|put|delete|stream)\(\s*\"([^\"]+)\"")


def _chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        message = "Debian's chromium is not installed (`make deps` installs it as root)"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for the module (a launch costs seconds); each test has its own context."""
    from playwright.sync_api import sync_playwright

    executable = _chromium()
    with sync_playwright() as p:
        # As root (CI), Chromium refuses to start sandboxed.
        launched = p.chromium.launch(executable_path=executable, args=["--disable-dev-shm-usage", *(["--no-sandbox"] if os.geteuid() == 0 else [])])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    context.set_default_timeout(WAIT_MS)
    yield context.new_page()
    context.close()


# Form controls without a label, buttons and links without a name: what a screen reader cannot announce.
UNNAMED_JS = """() => [...document.querySelectorAll('input, select, textarea, button, a')]
  .filter((el) => (el.matches('input, select, textarea') ? !el.labels.length && !el.getAttribute('aria-label')
                                                         : !el.textContent.trim() && !el.getAttribute('aria-label')))
  .map((el) => el.outerHTML)"""


def _documented(doc: dict[str, Any]) -> list[tuple[str, re.Pattern[str]]]:
    """(method, path regex) of every operation of the document."""
    out = []
    for template, methods in doc["paths"].items():
        pattern = re.compile("^" + re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(template)) + "$")
        out += [(method.upper(), pattern) for method in methods]
    return out


def test_console_calls_only_documented_endpoints(sidecar: Any) -> None:
    side: Sidecar = sidecar()
    doc = side.client().request("GET", "/openapi.json")
    files = assets()
    assert {"index.html", "app.js", "api.js", "style.css"} <= set(files)
    calls = {(m.upper().replace("STREAM", "GET"), path) for name, body in files.items() for m, path in CALL.findall(body.decode())}
    # Every page's endpoint is there (a regex that found nothing would make this test hollow).
    assert {("GET", "/groups/{group_id}"), ("POST", "/groups/{group_id}/expire"), ("GET", "/events/stream"),
            ("POST", "/topics/{topic}/records"), ("POST", "/clock/advance"), ("GET", "/requests")} <= calls  # fmt: skip
    undocumented = sorted(c for c in calls if c[1] not in doc["paths"] or c[0].lower() not in doc["paths"][c[1]])
    assert not undocumented, f"the console calls endpoints the OpenAPI document lacks: {undocumented}"
    for name, body in files.items():
        text = body.decode()
        # One door to the API (api.js), and no other host: no absolute URL anywhere.
        assert name == "api.js" or "fetch(" not in text, f"{name} calls fetch() itself"
        assert not re.search(r"https?://|wss?://|[\"'(]//\w", text), f"{name} names another host"


def test_console_shows_a_live_group_and_injects_faults(sidecar: Any, page: Any) -> None:
    from playwright.sync_api import expect

    side: Sidecar = sidecar("--topic", f"{TOPIC}:{PARTITIONS}", "--admin-token", TOKEN)
    api = side.client(TOKEN)
    doc = api.request("GET", "/openapi.json")
    documented = _documented(doc)
    admin = urlsplit(side.admin)
    seen: list[tuple[str, str]] = []
    page.on("request", lambda r: seen.append((r.method, r.url)))
    SHOTS.mkdir(parents=True, exist_ok=True)

    with Members(SimpleNamespace(bootstrap_servers=side.bootstrap), GROUP, TOPIC) as members:  # type: ignore[arg-type]
        first, second = members.start("kafka-python", "console-c1"), members.start("kafka-python", "console-c2")
        stable = api.request("GET", f"/groups/{GROUP}/wait", query={"state": "Stable", "members": 2, "timeout": API_WAIT_S})

        # The page itself needs no token; its calls do, and it asks for it.
        page.goto(f"{side.admin}/ui#/groups/{GROUP}")
        expect(page.get_by_role("heading", name="Token needed")).to_be_visible()
        page.get_by_label("API token").fill(TOKEN)
        page.get_by_label("API token").press("Enter")
        expect(page.locator("body[data-live=true]")).to_be_attached()

        summary = page.locator("dl.facts")
        expect(summary.locator("[data-field=state]")).to_have_text("Stable")
        expect(summary.locator("[data-field=generation_id]")).to_have_text(str(stable["generation_id"]))
        matrix = page.locator("table.matrix")
        for m in stable["members"]:
            row = matrix.locator(f"tr[data-member='{m['member_id']}']")
            owned = [f"{TOPIC}-{p}" for p in m["assignment"][TOPIC]]
            expect(row.locator("td[data-state=owns]")).to_have_count(len(owned))
            for cell in owned:
                expect(row.locator(f"td[data-partition='{cell}']")).to_have_text("owns")
        expect(matrix.locator("td[data-state=owns]")).to_have_count(PARTITIONS)
        page.screenshot(path=str(SHOTS / "group.png"), full_page=True)

        # Expire console-c1 with the keyboard alone.
        victim = next(m for m in stable["members"] if m["client_id"] == "console-c1")
        button = page.get_by_role("button", name=re.compile(r"Expire the session of console-c1"))
        button.focus()
        page.keyboard.press("Enter")
        # One rebalance opened by the expiry, Kafka's words for it as its trigger.
        rebalance = page.locator("ol.timeline > li:has(li[data-type='member.expired'])")
        expect(rebalance).to_have_count(1)
        expect(rebalance).to_have_attribute("data-trigger", re.compile(f"removing member {victim['member_id']} on heartbeat expiration"))
        expect(rebalance.locator("li[data-type='group.transition']").first).to_contain_text("Stable → PreparingRebalance")
        # The matrix changes live: the expired member id leaves it, the group forms again with two
        # (console-c1 rejoins with a new member id, in the same rebalance or the next).
        expect(matrix.locator(f"tr[data-member='{victim['member_id']}']")).to_have_count(0)
        again = api.request(
            "GET", f"/groups/{GROUP}/wait",
            query={"state": "Stable", "members": 2, "generation_at_least": stable["generation_id"] + 1, "timeout": API_WAIT_S},
        )  # fmt: skip
        expect(summary.locator("[data-field=generation_id]")).to_have_text(str(again["generation_id"]))
        expect(summary.locator("[data-field=state]")).to_have_text("Stable")
        expect(matrix.locator("tbody tr")).to_have_count(2)
        expect(matrix.locator("td[data-state=owns]")).to_have_count(PARTITIONS)
        page.locator("#h-timeline").scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "timeline.png"), full_page=True)

        # Produce from the topic page; a consumer of the group reads it.
        page.get_by_role("link", name="Topics").click()
        page.get_by_role("link", name=TOPIC).click()
        page.get_by_label("Key (empty: null)").fill("console-key")
        page.get_by_label("Value", exact=True).fill("hello from the console")
        page.get_by_label("Partition (empty: by key)").fill("2")
        page.get_by_role("button", name="Produce").click()
        expect(page.locator("#produce-result")).to_have_text(re.compile(r"partition 2 at offset \d+"))
        wait_for(
            lambda: any(r["value"] == "hello from the console" and r["partition"] == 2 for m in (first, second) for r in m.records()),
            "a consumer of the group to read the record produced from the console", members.explain,
        )
        page.get_by_label("Partition", exact=True).fill("2")
        page.get_by_role("button", name="Read").click()
        expect(page.locator("td", has_text="hello from the console")).to_have_count(1)
        page.screenshot(path=str(SHOTS / "topic.png"), full_page=True)
        assert page.evaluate(UNNAMED_JS) == [], "the topic page"

        # Committed offsets and lag: the consumers commit what they read (the record at offset 0
        # of partition 2); the commit's event redraws the group page.
        for member in (first, second):
            assert member.commit()["event"] == "committed", members.explain()
        page.get_by_role("link", name="Groups").click()
        page.get_by_role("link", name=GROUP).click()
        committed = page.locator("section[aria-labelledby=h-offsets] tbody tr", has=page.locator("td", has_text=TOPIC))
        expect(committed.filter(has=page.locator("td:nth-child(2)", has_text="2"))).to_have_text(re.compile(r"^orders\s*2\s*1\s*1\s*0$"))
        page.set_viewport_size({"width": 1000, "height": 860})
        page.locator("#toast").evaluate("toasts => toasts.replaceChildren()")
        page.screenshot(path=str(SHOTS / "readme.png"))
        page.set_viewport_size({"width": 1200, "height": 800})

        assert page.evaluate(UNNAMED_JS) == [], "the group page"
        for name in ("Faults", "Cluster", "Topics", "Requests"):
            page.get_by_role("link", name=name).click()
            expect(page.get_by_role("heading", level=1, name=name)).to_be_visible()
            page.screenshot(path=str(SHOTS / f"{name.lower()}.png"), full_page=True)
            assert page.evaluate(UNNAMED_JS) == [], f"the {name} page"
        assert not [m for m in (first, second) if m.errors()], members.explain()

    calls = [(method, urlsplit(url)) for method, url in seen]
    assert all(u.netloc == admin.netloc for _, u in calls), f"requests to another host: {calls}"
    api_calls = {(method, u.path) for method, u in calls if not u.path.startswith("/ui")}
    assert ("GET", "/events/stream") in api_calls and ("POST", f"/groups/{GROUP}/expire") in api_calls
    stray = sorted(c for c in api_calls if not any(c[0] == m and p.match(c[1]) for m, p in documented))
    assert not stray, f"the console called endpoints the OpenAPI document lacks: {stray}"


def test_console_moves_a_manual_clock_and_pushes_and_clears_errors(sidecar: Any, page: Any) -> None:
    from playwright.sync_api import expect

    side: Sidecar = sidecar("--brokers", "2", "--topic", f"{TOPIC}:1:2", "--manual-clock")
    api = side.client()
    # The console's files: the index at /ui/ (with a CSP that allows only this server), JSON 404 otherwise.
    status, _ = api.raw("GET", "/ui/no-such-file.js")
    assert status == 404
    with urlopen(f"{side.admin}/ui") as answer:  # follows the redirect to /ui/
        assert answer.url.endswith("/ui/") and "default-src 'self'" in answer.headers["Content-Security-Policy"]

    before = api.request("GET", "/clock")["now_ms"]
    page.goto(f"{side.admin}/ui/#/cluster")
    expect(page.locator("[data-field=now_ms]")).to_contain_text(f"{before} ms")
    page.get_by_label("Advance by (ms)").fill("1500")
    page.get_by_role("button", name="Advance").click()
    expect(page.locator("[data-field=now_ms]")).to_contain_text(f"{before + 1500} ms")
    assert api.request("GET", "/clock")["now_ms"] == before + 1500

    page.get_by_role("link", name="Faults").click()
    page.get_by_label("API", exact=True).fill("OffsetCommit")
    page.get_by_label("Errors (comma-separated)").fill("NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS")
    page.get_by_role("button", name="Push").click()
    pending = page.locator("table", has=page.locator("caption", has_text="Pending errors"))
    expect(pending.locator("tbody")).to_contain_text("NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS")
    assert list(api.request("GET", "/faults")["pending_errors"].values()) == [["NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS"]]
    page.get_by_role("button", name="Clear all faults").click()
    expect(pending.locator("tbody")).to_have_text("none")
    assert api.request("GET", "/faults")["pending_errors"] == {}

    # A partition's leader moves to the other in-sync replica; a group's coordinator to a chosen broker.
    leader = api.request("GET", f"/topics/{TOPIC}")["partitions"][0]["leader_id"]
    page.get_by_label("Leader topic").fill(TOPIC)
    page.get_by_label("Leader partition").fill("0")
    page.get_by_role("button", name="Move leader").click()
    wait_for(lambda: api.request("GET", f"/topics/{TOPIC}")["partitions"][0]["leader_id"] != leader, "the leader moved from the console")
    page.get_by_label("Coordinated group").fill("moved-group")
    page.get_by_label("To broker").fill(str(leader))
    page.get_by_role("button", name="Move coordinator").click()
    wait_for(lambda: api.request("GET", "/faults")["coordinator_moves"], "the coordinator moved from the console")
    assert api.request("GET", "/faults")["coordinator_moves"] == {"moved-group": leader}

    page.get_by_role("link", name="Requests").click()
    page.get_by_role("button", name="Turn it on").click()
    expect(page.get_by_role("button", name="Turn it off")).to_be_visible()
    assert api.request("GET", "/requests")["enabled"] is True


def test_console_shows_a_consumer_group_and_forces_a_rebalance(sidecar: Any, page: Any) -> None:
    """A KIP-848 consumer group (confluent-kafka, group.protocol=consumer): epochs instead of a
    generation, the matrix from each member's owned partitions, a forced rebalance's new epoch."""
    from playwright.sync_api import expect

    group = "console-kip848"
    side: Sidecar = sidecar("--topic", f"{TOPIC}:{PARTITIONS}", "--set", "group.consumer.heartbeat.interval.ms=200")
    api = side.client()
    wait = {"type": "consumer", "members": 2, "reconciled": "true", "timeout": API_WAIT_S}
    with Members(SimpleNamespace(bootstrap_servers=side.bootstrap), group, TOPIC) as members:  # type: ignore[arg-type]
        for client_id in ("kip848-c1", "kip848-c2"):
            members.start("confluent", client_id, group_protocol="consumer")
        stable = api.request("GET", f"/groups/{group}/wait", query=wait)
        page.goto(f"{side.admin}/ui/#/groups/{group}")
        summary, matrix = page.locator("dl.facts"), page.locator("table.matrix")
        expect(summary.locator("[data-field=state]")).to_have_text("Stable")
        expect(summary.locator("[data-field=group_epoch]")).to_have_text(str(stable["group_epoch"]))
        for m in stable["members"]:
            row = matrix.locator(f"tr[data-member='{m['member_id']}']")
            expect(row.locator("td[data-state=owns]")).to_have_count(len(m["assigned"][TOPIC]))
        expect(matrix.locator("td[data-state=owns]")).to_have_count(PARTITIONS)

        page.get_by_label("Reason (optional)").fill("rebalanced from the console test")
        page.get_by_role("button", name="Force a rebalance").click()
        rebalance = page.locator("ol.timeline > li[data-trigger*='rebalanced from the console test']")
        expect(rebalance).to_have_count(1)
        again = api.request("GET", f"/groups/{group}/wait", query={**wait, "generation_at_least": stable["group_epoch"] + 1})
        expect(summary.locator("[data-field=group_epoch]")).to_have_text(str(again["group_epoch"]))
        expect(summary.locator("[data-field=state]")).to_have_text("Stable")
        expect(matrix.locator("td[data-state=owns]")).to_have_count(PARTITIONS)
        page.screenshot(path=str(SHOTS / "consumer-group.png"), full_page=True)


def test_console_shows_a_streams_group_with_its_tasks(sidecar: Any, page: Any) -> None:
    """A KIP-1071 streams group (one member joined over the wire with a one-subtopology topology):
    its epochs, topology and the task matrix (subtopology_partition), then its member's session
    expired from the page and the rebalance on the timeline."""
    from playwright.sync_api import expect

    from mockbroker_protocol.messages import streams_group_heartbeat as sgh
    from tests.differential.harness import Connection

    group, member = "console-streams", "streams-member-1"
    side: Sidecar = sidecar("--topic", f"{TOPIC}:{PARTITIONS}")
    api = side.client()
    host, port = side.bootstrap.split(",")[0].rsplit(":", 1)
    conn = Connection((host, int(port)))
    try:
        topology = sgh.Topology(epoch=1, subtopologies=[sgh.Subtopology(subtopology_id="0", source_topics=[TOPIC])])
        joined = conn.call(88, 0, sgh.StreamsGroupHeartbeatRequest(
            group_id=group, member_id=member, member_epoch=0, rebalance_timeout_ms=30_000, topology=topology,
            process_id="process-1", active_tasks=[], standby_tasks=[], warmup_tasks=[],
        ))  # fmt: skip
        assert joined.error_code == 0, joined
        tasks = [sgh.StreamsGroupHeartbeatRequestTaskIds(t.subtopology_id, t.partitions) for t in joined.active_tasks or ()]
        steady = conn.call(88, 0, sgh.StreamsGroupHeartbeatRequest(
            group_id=group, member_id=member, member_epoch=joined.member_epoch, active_tasks=tasks, standby_tasks=[], warmup_tasks=[],
        ))  # fmt: skip
        assert steady.error_code == 0, steady
        described = api.request("GET", f"/groups/{group}")
        assert described["type"] == "streams" and described["subtopologies"] == {"0": PARTITIONS}

        page.goto(f"{side.admin}/ui/#/groups/{group}")
        summary, matrix = page.locator("dl.facts"), page.locator("table.matrix")
        expect(summary.locator("[data-field=state]")).to_have_text(described["state"])
        expect(summary.locator("[data-field=group_epoch]")).to_have_text(str(described["group_epoch"]))
        expect(summary.locator("[data-field=topology_status]")).to_have_text("ready")
        expect(matrix.locator("td[data-state=active]")).to_have_count(PARTITIONS)
        expect(matrix.locator("th", has_text=f"0_{PARTITIONS - 1}")).to_have_count(1)
        page.screenshot(path=str(SHOTS / "streams-group.png"), full_page=True)

        page.get_by_role("button", name=f"Expire the session of {described['members'][0]['client_id']} ({member})").click()
        expect(page.locator("ol.timeline li[data-type='streams_group.member_fenced']")).to_have_count(1)
        expect(page.locator("p.muted", has_text="No members")).to_have_count(1)
    finally:
        conn.close()


def test_console_shows_a_share_group_and_expires_a_lock(sidecar: Any, page: Any) -> None:
    """A KIP-932 share group (confluent-kafka's ShareConsumer): its members, assignment and the
    in-flight records of its partition with their delivery counts; a record's lock expired from
    the page (keyboard) makes it Available, then the member's session expired from the page."""
    from confluent_kafka import Message, ShareConsumer
    from playwright.sync_api import expect

    group, topic = "console-share", "jobs"
    side: Sidecar = sidecar("--topic", f"{topic}:1")
    api = side.client()
    share = ShareConsumer({"bootstrap.servers": side.bootstrap, "group.id": group, "client.id": "share-1",
                           "share.acknowledgement.mode": "explicit"})  # fmt: skip
    try:
        share.subscribe([topic])
        held: list[Any] = []

        def polled() -> bool:
            # The share partition starts at the high watermark of the group's first fetch
            # (share.auto.offset.reset latest): produce until the consumer gets records.
            api.request("POST", f"/topics/{topic}/records", {"records": [{"value": f"job {i}"} for i in range(3)]})
            got = share.poll(0.5)
            messages = [] if got is None else [got] if isinstance(got, Message) else list(got)
            held.extend(m for m in messages if m.error() is None)
            return len(held) >= 1

        wait_for(polled, "the share consumer's records")
        described = api.request("GET", f"/groups/{group}")
        acquired = [r for r in described["partitions"][0]["in_flight"] if r["state"] == "Acquired"]
        assert acquired and all(r["delivery_count"] == 1 for r in acquired), described["partitions"]

        page.goto(f"{side.admin}/ui/#/groups/{group}")
        summary, flight = page.locator("dl.facts").first, page.locator(f"section.share-partition[data-partition='{topic}-0']")
        expect(summary.locator("[data-field=group_epoch]")).to_have_text(str(described["group_epoch"]))
        expect(page.locator("table.matrix td[data-state=owns]")).to_have_count(1)
        # POST /groups/{id}/rebalance does not serve share groups: the page offers no such button.
        expect(page.get_by_role("button", name="Force a rebalance")).to_have_count(0)
        expect(flight.locator("tr[data-state=Acquired]")).to_have_count(len(acquired))
        expect(flight.locator(f"tr[data-offset='{acquired[0]['offset']}'] td").nth(1)).to_have_text("1")
        page.screenshot(path=str(SHOTS / "share-group.png"), full_page=True)

        button = page.get_by_role("button", name=f"Expire the acquisition lock of {topic}-0 offset {acquired[0]['offset']}")
        button.focus()
        page.keyboard.press("Enter")
        expect(flight.locator(f"tr[data-offset='{acquired[0]['offset']}']")).to_have_attribute("data-state", "Available")
        expect(page.locator("ol.timeline li[data-type='control.acquisition_lock_expired']")).to_have_count(1)
        member = described["members"][0]["member_id"]
        page.get_by_role("button", name=f"Expire the session of share-1 ({member})").click()
        expect(page.locator("ol.timeline li[data-type='share_group.member_fenced']")).to_have_count(1)
        assert page.evaluate(UNNAMED_JS) == []
    finally:
        share.close()


def test_console_shows_transactions(sidecar: Any, page: Any) -> None:
    """The transactions page: a confluent-kafka transactional producer with a transaction open
    shows Ongoing with its producer id, epoch and partitions; aborted from the page, it is not."""
    from confluent_kafka import Producer
    from playwright.sync_api import expect

    side: Sidecar = sidecar("--topic", f"{TOPIC}:2")
    producer = Producer({"bootstrap.servers": side.bootstrap, "transactional.id": "console-tx"})
    producer.init_transactions(DEADLINE_S)
    producer.begin_transaction()
    producer.produce(TOPIC, b"v", partition=1)
    assert producer.flush(DEADLINE_S) == 0
    described = side.client().request("GET", "/transactions/console-tx")
    assert described["state"] == "Ongoing"

    page.goto(f"{side.admin}/ui/#/transactions")
    row = page.locator("tr[data-transactional-id='console-tx']")
    expect(row).to_have_attribute("data-state", "Ongoing")
    expect(row.locator("td").nth(1)).to_have_text(str(described["producer_id"]))
    expect(row.locator("td").nth(2)).to_have_text(str(described["producer_epoch"]))
    expect(row.locator("td").nth(3)).to_have_text(f"{TOPIC}-1")
    page.screenshot(path=str(SHOTS / "transactions.png"), full_page=True)
    page.get_by_role("button", name="Abort the transaction of console-tx").click()
    expect(row).not_to_have_attribute("data-state", "Ongoing")
    assert page.evaluate(UNNAMED_JS) == []

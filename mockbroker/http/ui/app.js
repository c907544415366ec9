// The mockbroker console: a hash-routed page per area (groups, faults, cluster, topics,
// requests), each drawn from the HTTP control API (api.js) and redrawn as the event stream
// (GET /events/stream) reports changes. No framework, no build step: DOM built by h() below,
// never from HTML strings, so names and record values are shown as text.

import { api, ApiError, setToken, token } from "./api.js";

const view = document.getElementById("view");
const live = document.getElementById("live");
const toast = document.getElementById("toast");

// -- DOM helpers ---------------------------------------------------------------------------------

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// Replace a container's content, keeping keyboard focus on the control with the same data-key.
function fill(container, ...children) {
  const focused = document.activeElement && container.contains(document.activeElement) ? document.activeElement.dataset.key : null;
  container.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  if (focused) container.querySelector(`[data-key="${CSS.escape(focused)}"]`)?.focus();
}

function table(caption, headers, rows, attrs = {}) {
  return h("table", attrs,
    caption ? h("caption", { class: "muted" }, caption) : null,
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", { scope: "col", class: x.num ? "num" : null }, x.label ?? x)))),
    h("tbody", {}, rows.length ? rows : h("tr", {}, h("td", { colspan: headers.length, class: "muted" }, "none"))));
}

function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.filter(([, v]) => v !== undefined).map(([k, v, key]) => [h("dt", {}, k), h("dd", { dataset: key ? { field: key } : {} }, v ?? "—")]));
}

function say(message, kind = "error") {
  const line = h("p", { class: kind === "info" ? "info" : null }, message);
  toast.append(line);
  setTimeout(() => line.remove(), 6000);
}

// Run an action from a button or form: errors are shown, never thrown away.
async function act(what, fn) {
  try {
    const result = await fn();
    say(`${what}: done`, "info");
    await current?.refresh();
    return result;
  } catch (error) {
    say(`${what}: ${error.message}`);
    return undefined;
  }
}

function field(label, input) {
  return h("label", {}, label, input);
}

function formData(form) {
  const out = {};
  for (const [key, value] of new FormData(form).entries()) if (String(value).trim() !== "") out[key] = String(value).trim();
  return out;
}

const int = (value) => (value === undefined ? undefined : Number.parseInt(value, 10));
const stateBadge = (state) => h("span", { class: `state state-${state}`, dataset: { field: "state" } }, state);
const partitionsText = (byTopic) => Object.entries(byTopic || {}).map(([t, ps]) => `${t}: ${ps.join(", ")}`).join("; ") || "—";

// -- routing ---------------------------------------------------------------------------------------

let current = null; // {refresh(), onEvent(event)} of the page shown
let refreshTimer = null;

function schedule() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => current?.refresh().catch(showError), 150);
}

function showError(error) {
  if (error instanceof ApiError && error.status === 401) {
    fill(view, h("h1", {}, "Token needed"), h("p", {}, "This broker's API wants a bearer token (--admin-token): enter it above."));
  } else {
    say(error.message);
  }
}

const pages = {
  groups: (id) => (id === undefined ? groupsPage() : groupPage(id)),
  faults: () => faultsPage(),
  cluster: () => clusterPage(),
  topics: (name) => (name === undefined ? topicsPage() : topicPage(name)),
  requests: () => requestsPage(),
  transactions: () => transactionsPage(),
};

async function route() {
  const [name = "groups", arg] = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const page = pages[name] ? name : "groups";
  for (const link of document.querySelectorAll("nav a")) {
    if (link.getAttribute("href") === `#/${page}`) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  current = pages[page](arg || undefined);
  document.title = `${page} · mockbroker console`;
  try {
    await current.refresh();
  } catch (error) {
    showError(error);
  }
}

// -- groups --------------------------------------------------------------------------------------------

function groupsPage() {
  const body = h("div");
  fill(view, h("h1", {}, "Groups"), body);
  return {
    onEvent: (event) => event.group_id !== undefined && schedule(),
    async refresh() {
      const { groups } = await api.get("/groups");
      fill(body, table("Every group the coordinators know: classic, consumer, streams and share", ["Group", "Type", "State", { label: "Generation / epoch", num: 1 }, { label: "Members", num: 1 }],
        groups.map((g) => h("tr", { dataset: { group: g.group_id } },
          h("th", { scope: "row" }, h("a", { href: `#/groups/${encodeURIComponent(g.group_id)}` }, g.group_id)),
          h("td", {}, g.type), h("td", {}, stateBadge(g.state)), h("td", { class: "num" }, g.generation_id), h("td", { class: "num" }, g.members)))));
    },
  };
}

// A rebalance starts at a classic group's move to PreparingRebalance or a consumer group's epoch
// bump; the events that follow (joins, syncs, assignments, revocations) belong to it.
function startsRebalance(event) {
  return (event.type === "group.transition" && event.details?.to_state === "PreparingRebalance")
    || event.type === "consumer_group.epoch_bumped" || event.type === "streams_group.epoch_bumped" || event.type === "share_group.epoch_bumped";
}

const CAUSES = new Set([
  "control.session_expired", "control.rebalance_forced", "member.expired", "member.left", "member.removed", "member.joined", "member.rejoined",
  "consumer_group.member_fenced", "consumer_group.member_left", "consumer_group.member_joined", "consumer_group.member_updated",
  "consumer_group.subscription_metadata", "consumer_group.regexes_resolved",
  "streams_group.member_fenced", "streams_group.member_left", "streams_group.member_joined", "streams_group.topology_configured",
  "share_group.member_fenced", "share_group.member_left", "share_group.member_joined", "share_group.member_subscription",
]);

function rebalances(events) {
  const out = [];
  let bucket = { start: null, events: [] };
  for (const event of events) {
    if (startsRebalance(event)) {
      // What caused it (an expiry, a leave, a join, a forced rebalance) was recorded just before,
      // in the same step: it opens this rebalance, not the end of the previous one.
      const causes = [];
      while (bucket.events.length && CAUSES.has(bucket.events.at(-1).type) && bucket.events.at(-1).time_ms === event.time_ms) causes.unshift(bucket.events.pop());
      if (bucket.events.length) out.push(bucket);
      bucket = { start: event, events: causes };
    }
    bucket.events.push(event);
  }
  if (bucket.events.length) out.push(bucket);
  return out;
}

// The cluster clock's time of day, to the millisecond (UTC).
const clockTime = (ms) => new Date(ms).toISOString().slice(11, 23);

function eventLine(event) {
  const who = event.member_id ? ` ${event.details?.client_id ? `${event.details.client_id} ` : ""}(${event.member_id})` : "";
  const d = event.details || {};
  const extra = d.to_state ? ` ${d.from_state} → ${d.to_state}` : d.assignment ? ` ${partitionsText(d.assignment)}` : d.assigned ? ` ${partitionsText(d.assigned)}` : d.kind ? ` (${d.kind})` : d.cause ? ` (${d.cause})` : "";
  return h("li", { dataset: { type: event.type } }, h("time", { datetime: new Date(event.time_ms).toISOString() }, clockTime(event.time_ms)), " ", h("strong", {}, event.type), who, extra, event.reason && !d.to_state ? ` — ${event.reason}` : "");
}

function timeline(events) {
  const items = rebalances(events).reverse().map((r) => {
    const last = r.events[r.events.length - 1];
    const generation = Math.max(...r.events.map((e) => e.generation_id ?? -1));
    const trigger = r.start ? r.start.reason || r.start.type : "the group forms";
    return h("li", { dataset: { rebalance: generation, trigger } },
      h("p", {}, h("span", { class: "trigger" }, r.start ? `Rebalance to ${r.start.type.startsWith("group.") ? "generation" : "group epoch"} ${generation}` : "Before the first rebalance"),
        " — trigger: ", h("q", {}, trigger), h("span", { class: "muted" }, ` (${clockTime(r.events[0].time_ms)}–${clockTime(last.time_ms)}, ${last.time_ms - r.events[0].time_ms} ms)`)),
      h("ul", {}, r.events.map(eventLine)));
  });
  return items.length ? h("ol", { class: "timeline", "aria-label": "Rebalances, newest first" }, items) : h("p", { class: "muted" }, "No events for this group yet.");
}

function memberRows(group, expire) {
  const consumer = group.type !== "classic"; // epochs and member states (a share member has no state)
  const instance = (m) => (group.type === "streams" ? m.process_id : group.type === "consumer" ? m.instance_id : m.group_instance_id);
  return group.members.map((m) => h("tr", { dataset: { member: m.member_id } },
    h("th", { scope: "row" }, m.client_id),
    h("td", {}, h("code", {}, m.member_id)),
    h("td", {}, m.client_host),
    h("td", {}, instance(m) ?? "—"),
    consumer ? h("td", { class: "num" }, m.member_epoch) : h("td", {}, m.awaiting_join ? "awaiting join" : m.awaiting_sync ? "awaiting sync" : "in generation"),
    consumer ? h("td", {}, m.state ?? "—") : null,
    h("td", {}, h("button", { type: "button", class: "danger", "data-key": `expire-${m.member_id}`, "aria-label": `Expire the session of ${m.client_id} (${m.member_id})`, onclick: () => expire(m) }, "Expire session"))));
}

function cellState(group, member, topic, partition) {
  if (group.type === "share") return (member.assigned?.[topic] || []).includes(partition) ? "owns" : "";
  if (group.type === "consumer") {
    if ((member.pending_revocation?.[topic] || []).includes(partition)) return "revoking";
    if ((member.assigned?.[topic] || []).includes(partition)) return "owns";
    if ((member.target?.[topic] || []).includes(partition)) return "target";
    return "";
  }
  return (member.assignment?.[topic] || []).includes(partition) ? "owns" : "";
}

// A streams group's tasks (KIP-1071): subtopology x partition, each member's as active, standby
// or warm-up, with the ones it must give up and the ones its target adds.
function taskState(member, sub, p) {
  const has = (tasks, kind) => (tasks?.[kind]?.[sub] || []).includes(p);
  if (["active", "standby", "warmup"].some((k) => has(member.pending_revocation, k))) return "revoking";
  for (const kind of ["active", "standby", "warmup"]) if (has(member.assigned, kind)) return kind;
  return ["active", "standby", "warmup"].some((k) => has(member.target, k)) ? "target" : "";
}

function taskMatrix(group) {
  const columns = [];
  for (const [sub, count] of Object.entries(group.subtopologies || {}).sort()) for (let p = 0; p < count; p++) columns.push([sub, p]);
  if (!group.members.length || !columns.length) return h("p", { class: "muted" }, "No members, or no tasks yet (the topology is not ready).");
  return h("table", { class: "matrix", "aria-label": "Tasks: members by subtopology and partition" },
    h("caption", { class: "muted" }, `tasks at assignment epoch ${group.assignment_epoch}: "active", "standby", "warmup"; "target": assigned, not yet owned; "revoking": to give up`),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Member"), columns.map(([s, p]) => h("th", { scope: "col", class: "num" }, `${s}_${p}`)))),
    h("tbody", {}, group.members.map((m) => h("tr", { dataset: { member: m.member_id, client: m.client_id } },
      h("th", { scope: "row" }, m.client_id, h("br"), h("code", {}, m.member_id)),
      columns.map(([s, p]) => {
        const state = taskState(m, s, p);
        return h("td", { class: state === "active" ? "owned" : state || null, dataset: { task: `${s}_${p}`, state } }, state);
      })))));
}

function matrix(group, topics) {
  const columns = [];
  for (const [topic, count] of Object.entries(topics).sort()) for (let p = 0; p < count; p++) columns.push([topic, p]);
  if (!group.members.length || !columns.length) return h("p", { class: "muted" }, "No members or no subscribed topics.");
  return h("table", { class: "matrix", "aria-label": "Assignment: members by partitions" },
    h("caption", { class: "muted" }, group.type === "consumer" ? `owned now at assignment epoch ${group.assignment_epoch}; "target": assigned, not yet owned; "revoking": to give up`
      : group.type === "share" ? `assigned at assignment epoch ${group.assignment_epoch} (a share group's partitions may go to several members)` : `generation ${group.generation_id}`),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Member"), columns.map(([t, p]) => h("th", { scope: "col", class: "num" }, `${t}-${p}`)))),
    h("tbody", {}, group.members.map((m) => h("tr", { dataset: { member: m.member_id, client: m.client_id } },
      h("th", { scope: "row" }, m.client_id, h("br"), h("code", {}, m.member_id)),
      columns.map(([t, p]) => {
        const state = cellState(group, m, t, p);
        return h("td", { class: state === "owns" ? "owned" : state || null, dataset: { partition: `${t}-${p}`, state } }, state);
      })))));
}

// A share group's in-flight records (KIP-932), one table per partition it has fetched, with a
// button per Acquired record (and one per partition) to expire its acquisition lock now.
function sharePartitions(group, expireLock) {
  if (!group.partitions?.length) return h("p", { class: "muted" }, "No share partition yet (the group has not fetched).");
  return group.partitions.map((part) => {
    const where = `${part.topic}-${part.partition}`;
    const rows = part.in_flight.map((r) => h("tr", { dataset: { offset: r.offset, state: r.state } },
      h("th", { scope: "row", class: "num" }, r.offset), h("td", {}, r.state), h("td", { class: "num" }, r.delivery_count),
      h("td", {}, r.member_id ? h("code", {}, r.member_id) : "—"), h("td", { class: "num" }, r.lock_deadline_ms ?? "—"),
      h("td", {}, r.state === "Acquired" ? h("button", { type: "button", class: "danger", "data-key": `lock-${where}-${r.offset}`,
        "aria-label": `Expire the acquisition lock of ${where} offset ${r.offset}`, onclick: () => expireLock(part, [r.offset]) }, "Expire lock") : null)));
    return h("section", { class: "share-partition", dataset: { partition: where }, "aria-label": `Share partition ${where}` },
      h("h3", {}, where),
      facts([["Start offset (SPSO)", part.start_offset, "start_offset"], ["Next fetch offset", part.next_fetch_offset, "next_fetch_offset"]]),
      h("button", { type: "button", class: "danger", "data-key": `locks-${where}`, onclick: () => expireLock(part, null) }, `Expire every lock on ${where}`),
      table(`In-flight records of ${where}`, [{ label: "Offset", num: 1 }, "State", { label: "Delivery count", num: 1 }, "Held by", { label: "Lock expires (ms)", num: 1 }, "Fault"], rows));
  });
}

// The summary facts of a group's page, by kind: epochs for KIP-848, share and streams groups (with a
// streams group's topology), the generation and protocol for a classic group.
function groupFacts(group) {
  const epochs = [["Group epoch", group.group_epoch, "group_epoch"], ["Assignment epoch", group.assignment_epoch, "assignment_epoch"]];
  const byKind = {
    share: [...epochs, ["Assignor", group.assignor]],
    consumer: [...epochs, ["Reconciled", String(group.reconciled)], ["Assignor", group.assignor]],
    streams: [...epochs,
      ["Topology epoch", `${group.topology_epoch ?? "—"} (validated: ${group.validated_topology_epoch})`, "topology_epoch"],
      ["Topology status", group.topology_status ? Object.entries(group.topology_status).map(([k, v]) => `${k}: ${v}`).join("; ") : "ready", "topology_status"],
      ["Tasks by subtopology", Object.entries(group.subtopologies || {}).map(([s, n]) => `${s}: ${n}`).join(", ") || "—"],
      ["Shutdown requested by", group.shutdown_requested_by ?? "nobody"]],
  };
  const classic = [["Generation", group.generation_id, "generation_id"], ["Protocol", `${group.protocol_type ?? "—"} / ${group.protocol_name ?? "—"}`], ["Leader", group.leader_id ? h("code", {}, group.leader_id) : "—"]];
  return [["Type", group.type], ["State", stateBadge(group.state)], ...(byKind[group.type] ?? classic), ["Coordinator", `broker ${group.coordinator}`]];
}

// The topics a group touches (committed, subscribed or assigned), as GET /topics/{topic} gives
// them; a topic deleted meanwhile is left out.
async function groupTopics(group, committed) {
  const names = new Set([...Object.keys(committed), ...Object.keys(group.subscribed_topics || {})]);
  for (const m of group.members) {
    for (const t of [...(m.subscription || []), ...(m.subscribed_topic_names || []), ...Object.keys(m.assignment || {}), ...Object.keys(m.assigned || {})]) names.add(t);
  }
  const topics = {};
  for (const name of names) {
    try {
      topics[name] = await api.get("/topics/{topic}", { path: { topic: name } });
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 404) throw error;
    }
  }
  return topics;
}

// One row per committed partition: committed offset, log end and lag.
function lagRows(committed, topics) {
  const rows = [];
  for (const [topic, parts] of Object.entries(committed).sort()) {
    for (const [p, offset] of Object.entries(parts).sort((a, b) => a[0] - b[0])) {
      const end = topics[topic]?.partitions[p]?.log_end_offset;
      rows.push(h("tr", {}, h("td", {}, topic), h("td", { class: "num" }, p), h("td", { class: "num" }, offset), h("td", { class: "num" }, end ?? "—"), h("td", { class: "num" }, end === undefined ? "—" : Math.max(0, end - offset))));
    }
  }
  return rows;
}


function groupPage(groupId) {
  const summary = h("div");
  const members = h("div");
  const assignment = h("div");
  const offsets = h("div");
  const history = h("div");
  const inFlight = h("div");
  let events = null; // this group's events, oldest first
  const early = []; // streamed before the log was read
  const reason = h("input", { id: "rebalance-reason", name: "reason", size: 40, placeholder: "forced from the console" });
  // Not on a share group's page: POST /groups/{id}/rebalance serves classic, consumer and streams groups.
  const rebalanceForm = h("form", { class: "inline", onsubmit: (e) => { e.preventDefault(); act("rebalance", () => api.post("/groups/{group_id}/rebalance", { path: { group_id: groupId }, body: reason.value.trim() ? { reason: reason.value.trim() } : {} })); } },
    field("Reason (optional)", reason), h("button", { type: "submit" }, "Force a rebalance"));
  const expireLock = (part, offsets) => act(`expire the locks of ${part.topic}-${part.partition}`, () => api.post("/groups/{group_id}/expire-lock",
    { path: { group_id: groupId }, body: { topic: part.topic, partition: part.partition, ...(offsets ? { offsets } : {}) } }));
  const expire = (m) => act(`expire ${m.client_id}`, () => api.post("/groups/{group_id}/expire", { path: { group_id: groupId }, body: { member_id: m.member_id } }));
  fill(view,
    h("h1", {}, "Group ", h("code", {}, groupId)),
    summary,
    rebalanceForm,
    h("section", { "aria-labelledby": "h-members" }, h("h2", { id: "h-members" }, "Members"), members),
    h("section", { "aria-labelledby": "h-matrix" }, h("h2", { id: "h-matrix" }, "Assignment"), assignment),
    h("section", { "aria-labelledby": "h-inflight" }, h("h2", { id: "h-inflight" }, "In-flight records (share groups)"), inFlight),
    h("section", { "aria-labelledby": "h-offsets" }, h("h2", { id: "h-offsets" }, "Committed offsets and lag"), offsets),
    h("section", { "aria-labelledby": "h-timeline" }, h("h2", { id: "h-timeline" }, "Rebalance timeline"), history));
  return {
    onEvent(event) {
      if (event.group_id !== groupId) return;
      (events ?? early).push(event);
      schedule();
    },
    async refresh() {
      if (events === null) {
        // Events streamed while the log was being read are merged in, once each, by seq.
        const seen = new Map((await api.get("/events", { query: { group_id: groupId } })).events.map((e) => [e.seq, e]));
        for (const e of early) seen.set(e.seq, e);
        events = [...seen.values()].sort((a, b) => a.seq - b.seq);
      }
      fill(history, timeline(events));
      let group;
      try {
        group = await api.get("/groups/{group_id}", { path: { group_id: groupId } });
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 404) throw error;
        fill(summary, h("p", {}, "No such group now (it may have been deleted); its events are below."));
        fill(members); fill(assignment); fill(offsets);
        return;
      }
      rebalanceForm.hidden = group.type === "share";
      const consumer = group.type === "consumer";
      const streams = group.type === "streams";
      const share = group.type === "share";
      // Rows in a stable order (by client id), so a rebalance changes cells, not the row order.
      group.members.sort((a, b) => a.client_id.localeCompare(b.client_id) || a.member_id.localeCompare(b.member_id));
      fill(summary, facts(groupFacts(group)));
      const epochs = consumer || streams || share;
      fill(inFlight, share ? sharePartitions(group, expireLock) : h("p", { class: "muted" }, "Only share groups have in-flight records."));
      fill(members, table(null, ["Client id", "Member id", "Host", streams ? "Process id" : "Instance id", epochs ? { label: "Epoch", num: 1 } : "Status", ...(epochs ? ["Member state"] : []), "Fault"], memberRows(group, expire)));
      const committed = (await api.get("/groups/{group_id}/offsets", { path: { group_id: groupId } }).catch(() => ({ offsets: {} }))).offsets;
      const topics = await groupTopics(group, committed);
      const counts = Object.fromEntries(Object.entries(topics).map(([n, t]) => [n, t.partitions.length]));
      fill(assignment, streams ? taskMatrix(group) : matrix(group, counts));
      fill(offsets, table(null, ["Topic", { label: "Partition", num: 1 }, { label: "Committed", num: 1 }, { label: "Log end", num: 1 }, { label: "Lag", num: 1 }], lagRows(committed, topics)));
    },
  };
}

// -- transactions ----------------------------------------------------------------------------------------

// Every transactional id as its coordinator sees it (GET /transactions): state, producer id and
// epoch, the partitions of the ongoing transaction, and an abort button for an ongoing one.
function transactionsPage() {
  const body = h("div");
  fill(view, h("h1", {}, "Transactions"), body);
  return {
    onEvent(event) { if (event.type.startsWith("txn.") || event.type.startsWith("control.transaction")) schedule(); },
    async refresh() {
      const { transactions } = await api.get("/transactions");
      if (!transactions.length) { fill(body, h("p", { class: "muted" }, "No transactional producer yet.")); return; }
      const abort = (t) => act(`abort ${t.transactional_id}`, () => api.post("/transactions/{transactional_id}/abort", { path: { transactional_id: t.transactional_id }, body: {} }));
      fill(body, table("Producers by transactional id", ["Transactional id", "State", { label: "Producer id", num: 1 }, { label: "Epoch", num: 1 }, "Ongoing partitions", { label: "Timeout (ms)", num: 1 }, "Coordinator", "Fault"],
        transactions.map((t) => h("tr", { dataset: { transactionalId: t.transactional_id, state: t.state } },
          h("th", { scope: "row" }, h("code", {}, t.transactional_id)), h("td", {}, t.state), h("td", { class: "num" }, t.producer_id),
          h("td", { class: "num" }, t.producer_epoch), h("td", {}, t.partitions.map((p) => `${p.topic}-${p.partition}`).join(", ") || "—"),
          h("td", { class: "num" }, t.transaction_timeout_ms), h("td", {}, `broker ${t.coordinator}`),
          h("td", {}, t.state === "Ongoing" ? h("button", { type: "button", class: "danger", "aria-label": `Abort the transaction of ${t.transactional_id}`, onclick: () => abort(t) }, "Abort") : null)))));
    },
  };
}

// -- faults ----------------------------------------------------------------------------------------------

let names = null; // API and error names, from the OpenAPI document's enums

async function loadNames() {
  if (names) return names;
  const doc = await api.get("/openapi.json");
  const body = doc.paths["/faults/errors"].post.requestBody.content["application/json"].schema;
  const outcome = doc.paths["/requests"].get.parameters.find((p) => p.name === "outcome");
  names = { apis: body.properties.api.enum || [], errors: body.properties.errors.items.enum || [], outcomes: outcome?.schema?.enum || [] };
  for (const [id, values] of [["api-names", names.apis], ["error-names", names.errors]]) {
    if (!document.getElementById(id)) document.body.append(h("datalist", { id }, values.map((v) => h("option", { value: v }))));
  }
  return names;
}

function faultsPage() {
  const state = h("div");
  const post = (what, template, body, path) => act(what, () => api.post(template, { body, path }));
  const submit = (handler) => (e) => { e.preventDefault(); handler(formData(e.target)); };
  const text = (name, attrs = {}) => h("input", { name, ...attrs });
  fill(view,
    h("h1", {}, "Faults"),
    h("section", { "aria-labelledby": "h-active" }, h("h2", { id: "h-active" }, "In force"), state,
      h("button", { type: "button", class: "danger", onclick: () => act("clear faults", () => api.delete("/faults")) }, "Clear all faults")),
    h("h2", {}, "Inject"),
    h("div", { class: "columns" },
      h("section", {},
        h("fieldset", {}, h("legend", {}, "Expire a member's session"),
          h("form", { class: "inline", onsubmit: submit((d) => post(`expire in ${d.group}`, "/groups/{group_id}/expire", d.member_id ? { member_id: d.member_id } : { client_id: d.client_id }, { group_id: d.group })) },
            field("Group", text("group", { required: true })), field("Client id", text("client_id")), field("or member id", text("member_id")), h("button", { type: "submit" }, "Expire"))),
        h("fieldset", {}, h("legend", {}, "Force a rebalance"),
          h("form", { class: "inline", onsubmit: submit((d) => post(`rebalance ${d.group}`, "/groups/{group_id}/rebalance", d.reason ? { reason: d.reason } : {}, { group_id: d.group })) },
            field("Group", text("group", { required: true })), field("Reason", text("reason")), h("button", { type: "submit" }, "Rebalance"))),
        h("fieldset", {}, h("legend", {}, "Broker down / up"),
          h("form", { class: "inline", onsubmit: (e) => e.preventDefault() },
            field("Broker id", text("broker", { id: "fault-broker", type: "number", min: 0, value: 0 })),
            h("button", { type: "button", class: "danger", onclick: () => post("broker down", "/brokers/{broker_id}/down", undefined, { broker_id: int(document.getElementById("fault-broker").value) }) }, "Down"),
            h("button", { type: "button", onclick: () => post("broker up", "/brokers/{broker_id}/up", undefined, { broker_id: int(document.getElementById("fault-broker").value) }) }, "Up"))),
        h("fieldset", {}, h("legend", {}, "Move a partition's leader"),
          h("form", { class: "inline", onsubmit: submit((d) => post(`leader of ${d.topic}-${d.partition}`, "/topics/{topic}/partitions/{partition}/leader",
            { broker_id: int(d.broker) ?? null }, { topic: d.topic, partition: int(d.partition) })) },
            field("Leader topic", text("topic", { required: true })), field("Leader partition", text("partition", { type: "number", min: 0, required: true })),
            field("New leader (next in-sync replica if empty)", text("broker", { type: "number", min: 0 })), h("button", { type: "submit" }, "Move leader"))),
        h("fieldset", {}, h("legend", {}, "Move a group's coordinator"),
          h("form", { class: "inline", onsubmit: submit((d) => post(`coordinator of ${d.group}`, "/groups/{group_id}/coordinator",
            { broker_id: int(d.broker) }, { group_id: d.group })) },
            field("Coordinated group", text("group", { required: true })), field("To broker", text("broker", { type: "number", min: 0, required: true })),
            h("button", { type: "submit" }, "Move coordinator")))),
      h("section", {},
        h("fieldset", {}, h("legend", {}, "Push errors"),
          h("form", { class: "inline", onsubmit: submit((d) => post("push errors", "/faults/errors", {
            api: d.api, errors: d.errors.split(/[\s,]+/).filter(Boolean), broker: int(d.broker), topic: d.topic, partition: int(d.partition) })) },
            field("API", text("api", { required: true, list: "api-names", placeholder: "OffsetCommit" })),
            field("Errors (comma-separated)", text("errors", { required: true, list: "error-names", placeholder: "NOT_COORDINATOR" })),
            field("Broker", text("broker", { type: "number", min: 0 })), field("Topic", text("topic")), field("Partition", text("partition", { type: "number", min: 0 })),
            h("button", { type: "submit" }, "Push"))),
        h("fieldset", {}, h("legend", {}, "Latency"),
          h("form", { class: "inline", onsubmit: submit((d) => post("latency", "/faults/latency", { ms: Number(d.ms), api: d.api, broker: int(d.broker) })) },
            field("ms", text("ms", { type: "number", min: 0, required: true })), field("API (all if empty)", text("api", { list: "api-names" })),
            field("Broker", text("broker", { type: "number", min: 0 })), h("button", { type: "submit" }, "Add"))),
        h("fieldset", {}, h("legend", {}, "Disconnect the next requests"),
          h("form", { class: "inline", onsubmit: submit((d) => post("disconnect", "/faults/disconnect", { api: d.api, broker: int(d.broker), count: int(d.count ?? "1") })) },
            field("API (any if empty)", text("api", { list: "api-names" })), field("Broker", text("broker", { type: "number", min: 0 })),
            field("Count", text("count", { type: "number", min: 1, value: 1 })), h("button", { type: "submit" }, "Add"))))));
  loadNames().catch(() => {});
  return {
    onEvent: (event) => event.type.startsWith("control.") && schedule(),
    async refresh() {
      const f = await api.get("/faults");
      fill(state,
        table("Pending errors (used one per matching request)", ["Where", "Errors"], Object.entries(f.pending_errors).map(([k, v]) => h("tr", {}, h("td", {}, k), h("td", {}, v.join(", "))))),
        table("Interceptors", ["Id", "Name", "API", "Broker", { label: "Calls", num: 1 }, ""], f.interceptors.map((i) => h("tr", {},
          h("td", { class: "num" }, i.id), h("td", {}, i.name), h("td", {}, i.api ?? "any"), h("td", {}, i.broker ?? "any"), h("td", { class: "num" }, i.calls),
          h("td", {}, h("button", { type: "button", "data-key": `remove-${i.id}`, "aria-label": `Remove interceptor ${i.id}`, onclick: () => act(`remove ${i.id}`, () => api.delete("/faults/interceptors/{interceptor_id}", { path: { interceptor_id: i.id } })) }, "Remove"))))),
        facts([["Brokers down", f.brokers_down.join(", ") || "none"], ["Coordinator moves", JSON.stringify(f.coordinator_moves)], ["API version caps", JSON.stringify(f.api_version_caps)]]));
    },
  };
}

// -- cluster ---------------------------------------------------------------------------------------------

function clusterPage() {
  const body = h("div");
  const clock = h("div");
  const ms = h("input", { id: "advance-ms", name: "ms", type: "number", min: 1, value: 1000 });
  const advance = h("button", { type: "submit" }, "Advance");
  fill(view, h("h1", {}, "Cluster"), body,
    h("section", { "aria-labelledby": "h-clock" }, h("h2", { id: "h-clock" }, "Clock"), clock,
      h("form", { class: "inline", onsubmit: (e) => { e.preventDefault(); act("advance", () => api.post("/clock/advance", { body: { ms: Number(ms.value) } })); } },
        field("Advance by (ms)", ms), advance)));
  return {
    // Any event may come with a clock move; a manual clock's advance records none of its own.
    onEvent: () => schedule(),
    async refresh() {
      const c = await api.get("/cluster");
      const t = await api.get("/clock");
      const f = await api.get("/faults");
      fill(body, facts([["Cluster id", c.cluster_id], ["Controller", c.controller_id], ["Bootstrap", c.bootstrap_servers], ["API version caps", Object.keys(f.api_version_caps).length ? JSON.stringify(f.api_version_caps) : "none (the configured ranges)"]]),
        h("h2", {}, "Brokers"),
        table(null, ["Broker", "Listener (bound)", "Advertised", "Rack", "Status", ""], c.brokers.map((b) => h("tr", { dataset: { broker: b.node_id } },
          h("th", { scope: "row" }, b.node_id), h("td", {}, `${b.host}:${b.port}`), h("td", {}, `${b.advertised_host}:${b.advertised_port}`), h("td", {}, b.rack ?? "—"),
          h("td", {}, b.up ? "up" : "DOWN"),
          h("td", {}, b.up
            ? h("button", { type: "button", class: "danger", "data-key": `down-${b.node_id}`, onclick: () => act(`broker ${b.node_id} down`, () => api.post("/brokers/{broker_id}/down", { path: { broker_id: b.node_id } })) }, `Take broker ${b.node_id} down`)
            : h("button", { type: "button", "data-key": `up-${b.node_id}`, onclick: () => act(`broker ${b.node_id} up`, () => api.post("/brokers/{broker_id}/up", { path: { broker_id: b.node_id } })) }, `Bring broker ${b.node_id} up`))))));
      fill(clock, facts([["Kind", t.manual ? "manual (moves only when advanced)" : "real time (cannot be advanced)"], ["Now", `${t.now_ms} ms (${new Date(t.now_ms).toISOString()})`, "now_ms"]]));
      ms.disabled = advance.disabled = !t.manual;
    },
  };
}

// -- topics ----------------------------------------------------------------------------------------------

function topicsPage() {
  const body = h("div");
  fill(view, h("h1", {}, "Topics"), body);
  return {
    onEvent: () => {},
    async refresh() {
      const { topics } = await api.get("/topics");
      fill(body, table(null, ["Topic", { label: "Partitions", num: 1 }, { label: "Replication", num: 1 }, { label: "Records (sum of end offsets)", num: 1 }],
        topics.map((t) => h("tr", {}, h("th", { scope: "row" }, h("a", { href: `#/topics/${encodeURIComponent(t.name)}` }, t.name)),
          h("td", { class: "num" }, t.partitions.length), h("td", { class: "num" }, t.replication_factor),
          h("td", { class: "num" }, t.partitions.reduce((n, p) => n + p.log_end_offset - p.log_start_offset, 0))))));
    },
  };
}

function topicPage(name) {
  const parts = h("div");
  const records = h("div", { "aria-live": "polite" });
  const produced = h("p", { role: "status", id: "produce-result" });
  const browse = async (d) => {
    try {
      const r = await api.get("/topics/{topic}/partitions/{partition}/records", { path: { topic: name, partition: int(d.partition) }, query: { offset: d.offset, limit: d.limit, encoding: d.encoding } });
      fill(records, table(`partition ${d.partition}: next offset ${r.next_offset}, log end ${r.log_end_offset}`, [{ label: "Offset", num: 1 }, "Timestamp", "Key", "Value", "Headers"],
        r.records.map((x) => h("tr", { dataset: { offset: x.offset } }, h("td", { class: "num" }, x.offset), h("td", {}, new Date(x.timestamp).toISOString()),
          h("td", { class: "mono" }, x.key ?? "null"), h("td", { class: "mono" }, x.value ?? "null"), h("td", { class: "mono" }, x.headers.map((hd) => `${hd.key}=${hd.value ?? "null"}`).join(", "))))));
    } catch (error) {
      say(`browse: ${error.message}`);
    }
  };
  const produce = async (d) => {
    const headers = (d.headers || "").split("\n").filter((l) => l.includes("=")).map((l) => ({ key: l.slice(0, l.indexOf("=")).trim(), value: l.slice(l.indexOf("=") + 1) }));
    const record = { key: d.key ?? null, value: d.value ?? "", headers };
    if (d.partition !== undefined) record.partition = int(d.partition);
    const r = await act("produce", () => api.post("/topics/{topic}/records", { path: { topic: name }, body: { records: [record], encoding: d.encoding || "utf-8" } }));
    if (r) produced.textContent = `Produced to partition ${r.offsets[0].partition} at offset ${r.offsets[0].offset}.`;
  };
  const encoding = (id) => h("select", { name: "encoding", id }, h("option", { value: "utf-8" }, "UTF-8"), h("option", { value: "base64" }, "base64"));
  // An append records no event, so the offsets are redrawn on demand (and after a produce).
  const again = h("button", { type: "button", onclick: () => current.refresh().catch(showError) }, "Refresh offsets");
  fill(view, h("h1", {}, "Topic ", h("code", {}, name)), parts, again,
    h("div", { class: "columns" },
      h("section", { "aria-labelledby": "h-browse" }, h("h2", { id: "h-browse" }, "Browse records"),
        h("form", { class: "inline", onsubmit: (e) => { e.preventDefault(); browse(formData(e.target)); } },
          field("Partition", h("input", { name: "partition", type: "number", min: 0, value: 0, required: true })),
          field("From offset", h("input", { name: "offset", type: "number", min: 0, value: 0 })),
          field("Limit", h("input", { name: "limit", type: "number", min: 1, value: 50 })),
          field("Encoding", encoding("browse-encoding")), h("button", { type: "submit" }, "Read"))),
      h("section", { "aria-labelledby": "h-produce" }, h("h2", { id: "h-produce" }, "Produce a record"),
        h("form", { class: "inline", id: "produce", onsubmit: (e) => { e.preventDefault(); produce(formData(e.target)); } },
          field("Key (empty: null)", h("input", { name: "key", id: "produce-key" })),
          field("Value", h("textarea", { name: "value", id: "produce-value", rows: 2, cols: 30 })),
          field("Headers (key=value a line)", h("textarea", { name: "headers", rows: 2, cols: 20 })),
          field("Partition (empty: by key)", h("input", { name: "partition", id: "produce-partition", type: "number", min: 0 })),
          field("Encoding", encoding("produce-encoding")), h("button", { type: "submit" }, "Produce")),
        produced)),
    records);
  return {
    onEvent: () => {},
    async refresh() {
      const t = await api.get("/topics/{topic}", { path: { topic: name } });
      fill(parts, facts([["Topic id", t.topic_id], ["Replication factor", t.replication_factor], ["Configs", Object.entries(t.configs).map(([k, v]) => `${k}=${v}`).join(", ") || "defaults"]]),
        table(null, [{ label: "Partition", num: 1 }, { label: "Leader", num: 1 }, { label: "Leader epoch", num: 1 }, "Replicas", "ISR", { label: "Log start", num: 1 }, { label: "Log end", num: 1 }],
          t.partitions.map((p) => h("tr", {}, h("td", { class: "num" }, p.index), h("td", { class: "num" }, p.leader_id), h("td", { class: "num" }, p.leader_epoch),
            h("td", {}, p.replica_ids.join(", ")), h("td", {}, p.isr_ids.join(", ")), h("td", { class: "num" }, p.log_start_offset), h("td", { class: "num" }, p.log_end_offset)))));
    },
  };
}

// -- requests --------------------------------------------------------------------------------------------

function requestsPage() {
  const status = h("p", { role: "status" });
  const body = h("div");
  let filters = {};
  const toggle = h("button", { type: "button", id: "log-toggle" }, "…");
  let enabled = false;
  toggle.addEventListener("click", () => act("request log", () => api.put("/requests/log", { body: { enabled: !enabled } })));
  const text = (name, attrs = {}) => h("input", { name, ...attrs });
  const outcome = h("select", { name: "outcome" }, h("option", { value: "" }, "any"));
  fill(view, h("h1", {}, "Requests"), h("p", {}, status, toggle),
    h("form", { class: "inline", role: "search", onsubmit: (e) => { e.preventDefault(); filters = formData(e.target); current.refresh().catch(showError); } },
      field("API", text("api", { list: "api-names" })), field("Client id", text("client_id")), field("Error", text("error", { list: "error-names" })),
      field("Outcome", outcome),
      field("Broker", text("broker", { type: "number", min: 0 })), field("Last", text("limit", { type: "number", min: 1, value: 200 })),
      h("button", { type: "submit" }, "Filter")),
    body);
  loadNames().then((n) => outcome.append(...n.outcomes.map((o) => h("option", { value: o }, o)))).catch(() => {});
  return {
    onEvent: () => {},
    async refresh() {
      const { limit, ...query } = filters;
      const r = await api.get("/requests", { query });
      enabled = r.enabled;
      status.textContent = r.enabled ? "The request log is on. " : "The request log is off (a served broker starts with it off). ";
      toggle.textContent = r.enabled ? "Turn it off" : "Turn it on";
      const shown = r.requests.slice(-(int(limit) || 200)).reverse();
      fill(body, table(`${shown.length} of ${r.requests.length} matching, newest first`, [{ label: "Seq", num: 1 }, { label: "Time (ms)", num: 1 }, "Broker", "API", "Client id", "Client", "Outcome", "Errors"],
        shown.map((x) => h("tr", {}, h("td", { class: "num" }, x.seq), h("td", { class: "num" }, x.time_ms), h("td", {}, x.broker_id), h("td", {}, `${x.api} v${x.api_version}`),
          h("td", {}, x.client_id), h("td", {}, x.client), h("td", {}, x.outcome), h("td", {}, x.errors.join(", "))))));
    },
  };
}

// -- start -----------------------------------------------------------------------------------------------

document.getElementById("token").value = token();
document.getElementById("token-form").addEventListener("submit", (e) => {
  e.preventDefault();
  setToken(document.getElementById("token").value.trim());
  location.reload();
});
window.addEventListener("hashchange", () => {
  route();
  view.focus();
});

async function start() {
  await route();
  let since = 0;
  try {
    since = (await api.get("/events", { query: { limit: 1 } })).last_seq;
  } catch (error) {
    showError(error);
  }
  api.stream("/events/stream", {
    query: { since_seq: since },
    onEvent: (event) => current?.onEvent(event),
    onStatus: (ok, message) => {
      live.textContent = message;
      live.classList.toggle("ok", ok);
      document.body.dataset.live = ok ? "true" : "false";
    },
  });
}

start();

// Berth's web view: fills the server's pages from the gateway's JSON. Plain JavaScript, no library.
"use strict";

const berth = (() => {
  const REFRESH_MS = 1000;

  const esc = (text) => String(text ?? "").replace(/[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const get = async (path) => {
    const resp = await fetch(path, { headers: { Accept: "application/json" } });
    if (!resp.ok) {
      const body = await resp.json().catch(() => ({}));  // the gateway's Status says why
      throw new Error(body.message || `${path}: HTTP ${resp.status}`);
    }
    return resp.json();
  };
  const status = (text) => { document.getElementById("status").textContent = text; };
  const cpu = (milli) => (milli % 1000 === 0 ? `${milli / 1000}` : `${milli}m`);
  const bytes = (n) => {
    for (const [suffix, size] of [["Gi", 2 ** 30], ["Mi", 2 ** 20], ["Ki", 2 ** 10]]) {
      if (n >= size) return `${(n / size).toFixed(n % size ? 1 : 0)}${suffix}`;
    }
    return `${n}`;
  };
  const share = ([used, total]) => (total ? used / total : 0);
  // Green when empty, through yellow, to red when full; dark red when over-committed.
  const colour = (f) => (f > 1 ? "#7a0000" : `hsl(${Math.round(120 * (1 - f))}, 70%, 45%)`);
  const podLink = (ns, name) => `<a href="/ui/pods/${encodeURIComponent(ns)}/${encodeURIComponent(name)}">${esc(name)}</a>`;

  function renderOverview(data) {
    const c = data.counts;
    document.getElementById("counts").innerHTML =
      `<b id="bound">${c.bound}</b> bound, <b id="pending-count">${c.pending}</b> pending, ` +
      (c.failed ? `<b id="failed">${c.failed}</b> failed, ` : "") +
      `<b>${c.preempted}</b> preempted, on <b>${data.nodes.length}</b> nodes`;
    const groups = new Map();
    for (const n of data.nodes) {
      if (!groups.has(n.group)) groups.set(n.group, []);
      groups.get(n.group).push(n);
    }
    const parts = [];
    for (const [group, nodes] of [...groups.entries()].sort()) {
      const cells = nodes.map((n) => {
        const f = Math.max(share(n.cpu), share(n.memory), share(n.pods));
        const title = `${n.name}: cpu ${cpu(n.cpu[0])}/${cpu(n.cpu[1])}, memory ${bytes(n.memory[0])}/` +
          `${bytes(n.memory[1])}, pods ${n.pods[0]}/${n.pods[1]}`;
        return `<a class="cell${n.taints ? " tainted" : ""}" data-node="${esc(n.name)}" title="${esc(title)}" ` +
          `href="/ui/nodes/${encodeURIComponent(n.name)}" style="background:${colour(f)}"></a>`;
      }).join("");
      const label = group ? `${esc(data.groupBy)}=${esc(group)}` : "no " + esc(data.groupBy);
      parts.push(`<div class="group"><h3>${label} (${nodes.length})</h3><div class="cells">${cells}</div></div>`);
    }
    document.getElementById("nodes").innerHTML = parts.join("");
    document.querySelector("#pending tbody").innerHTML = data.pending.map((p) =>
      `<tr><td>${esc(p.namespace)}</td><td>${podLink(p.namespace, p.name)}</td><td>${esc(p.message)}</td></tr>`).join("");
  }

  // The gateway answers `after=SEQ` once the event log has grown past SEQ: each answer is a change,
  // pushed as it happens; the page asks again at once (or after a pause when the gateway is away).
  async function overview() {
    const params = new URLSearchParams(location.search);
    let seq = -1, shown = "";
    for (;;) {
      try {
        const query = new URLSearchParams(params);
        if (seq >= 0) query.set("after", seq);
        const data = await get(`/apis/berth.dev/v1/overview?${query}`);
        seq = data.seq;
        delete data.seq;
        const text = JSON.stringify(data);
        if (text !== shown) {  // redrawn only when what it shows changed: the rest stays under the pointer
          renderOverview(data);
          shown = text;
        }
        status(`updated ${new Date().toLocaleTimeString()}`);
      } catch (err) {
        status(`cannot reach the gateway: ${err.message}`);
        await new Promise((resolve) => setTimeout(resolve, REFRESH_MS));
      }
    }
  }

  function fields(pairs) {
    document.getElementById("fields").innerHTML =
      pairs.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join("");
  }

  function renderExplain(ex) {
    const plugins = [...new Set(ex.nodes.flatMap((n) => n.filters.map((f) => f.plugin)))];
    const scorers = [...new Set(ex.nodes.flatMap((n) => Object.keys(n.weighted || {})))];
    document.getElementById("explain-summary").textContent =
      `attempt ${ex.attempt}: ${ex.recorded || ex.replayed} — ${ex.feasible.length} of ${ex.nodes_total} nodes feasible` +
      (ex.pick ? `; ${ex.pick}` : "");
    document.querySelector("#explain thead").innerHTML = "<tr><th>Node</th><th>Status</th>" +
      plugins.map((p) => `<th>${esc(p)}</th>`).join("") + scorers.map((p) => `<th>${esc(p)}</th>`).join("") +
      "<th>Total</th></tr>";
    document.querySelector("#explain tbody").innerHTML = ex.nodes.map((n) => {
      const verdicts = new Map(n.filters.map((f) => [f.plugin, f]));
      const cells = plugins.map((p) => {
        const f = verdicts.get(p);
        return f ? `<td class="${esc(f.verdict)}" title="${esc(f.reason || "")}">${esc(f.verdict)}</td>` : "<td></td>";
      }).join("");
      const scores = scorers.map((p) => `<td>${esc((n.weighted || {})[p] ?? "")}</td>`).join("");
      return `<tr class="${n.picked ? "picked" : ""}"><td>${esc(n.node)}</td><td>${esc(n.status)}</td>${cells}${scores}` +
        `<td>${esc(n.total ?? "")}</td></tr>`;
    }).join("");
  }

  async function pod(ns, name) {
    const base = `/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(name)}`;
    const p = await get(`${base}?events=true`);
    const spec = p.spec || {}, st = p.status || {};
    fields([["Status", esc(st.phase)], ["Node", spec.nodeName ? `<a href="/ui/nodes/${encodeURIComponent(spec.nodeName)}">${esc(spec.nodeName)}</a>` : "&lt;none&gt;"],
      ["Nominated node", esc(st.nominatedNodeName || "<none>")], ["Priority", esc(spec.priority ?? 0)],
      ["Message", esc(st.message || "")]]);
    document.querySelector("#events tbody").innerHTML = (p.schedulingEvents || []).map((e) =>
      `<tr><td>${esc(e.type)}</td><td>${esc(e.reason)}</td><td>${esc(e.from)}</td><td>${esc(e.message)}</td></tr>`).join("");
    const explainPath = `/apis/berth.dev/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(name)}/explain`;
    const select = document.getElementById("attempt");
    const show = async (attempt) => {
      try {
        const ex = await get(attempt ? `${explainPath}?attempt=${attempt}` : explainPath);
        renderExplain(ex);
        return ex;
      } catch (err) {
        document.getElementById("explain-summary").textContent = `no recorded attempt to explain (${err.message})`;
        return null;
      }
    };
    select.onchange = () => show(select.value);
    const last = await show("");
    const attempts = last ? last.attempt : 0;
    select.innerHTML = `<option value="">last attempt</option>` +
      Array.from({ length: attempts }, (_, i) => `<option value="${i + 1}">attempt ${i + 1}</option>`).join("");
    status(`loaded ${new Date().toLocaleTimeString()}`);
  }

  async function node(name) {
    const n = await get(`/api/v1/nodes/${encodeURIComponent(name)}`);
    const meta = n.metadata || {}, spec = n.spec || {};
    const labels = Object.entries(meta.labels || {}).map(([k, v]) => `${esc(k)}=${esc(v)}`).join("<br>") || "&lt;none&gt;";
    const taints = (spec.taints || []).map((t) => esc(`${t.key}=${t.value || ""}:${t.effect}`)).join("<br>") || "&lt;none&gt;";
    fields([["Labels", labels], ["Taints", taints], ["Unschedulable", esc(Boolean(spec.unschedulable))]]);
    const data = await get("/apis/berth.dev/v1/overview");
    const mine = data.nodes.find((x) => x.name === name);
    if (mine) {
      document.querySelector("#resources tbody").innerHTML = [["cpu", mine.cpu, cpu], ["memory", mine.memory, bytes],
        ["pods", mine.pods, String]].map(([r, pair, fmt]) =>
        `<tr><td>${r}</td><td>${fmt(pair[0])}</td><td>${fmt(pair[1])}</td><td><span class="bar">` +
        `<span style="width:${Math.min(100, Math.round(100 * share(pair)))}%"></span></span> ` +
        `${Math.round(100 * share(pair))}%</td></tr>`).join("");
    }
    const pods = (await get(`/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${name}`)}`)).items;
    const requests = (p, r) => (p.spec.containers || []).map((c) => ((c.resources || {}).requests || {})[r]).filter(Boolean).join("+");
    document.querySelector("#pods tbody").innerHTML = pods.map((p) =>
      `<tr><td>${esc(p.metadata.namespace)}</td><td>${podLink(p.metadata.namespace, p.metadata.name)}</td>` +
      `<td>${esc(requests(p, "cpu") || "0")}</td><td>${esc(requests(p, "memory") || "0")}</td></tr>`).join("");
    status(`loaded ${new Date().toLocaleTimeString()}`);
  }

  async function replay() {
    const button = document.getElementById("run");
    button.onclick = async () => {
      button.disabled = true;
      const config = document.getElementById("config").value.trim();
      status("replaying the log...");
      try {
        const r = await get(`/apis/berth.dev/v1/replay${config ? `?config=${encodeURIComponent(config)}` : ""}`);
        const diverged = r.divergences.filter((d) => d.kind !== "what-if").length;
        document.getElementById("summary").textContent =
          `${r.matched} of ${r.decisions} decisions and ${r.preemptions_matched} of ${r.preemptions} preemptions ` +
          `replayed as recorded, ${diverged} diverged` + (r.what_if ? `; the configuration would change ${r.changed}` : "");
        document.querySelector("#divergences tbody").innerHTML = r.divergences.map((d) => {
          const [ns, name] = d.pod.includes("/") ? d.pod.split("/", 2) : ["default", d.pod];
          return `<tr><td>${esc(d.kind)}</td><td>${podLink(ns, name)}</td><td>${esc(d.attempt || "")}</td>` +
            `<td>${esc(d.recorded)}</td><td>${esc(d.replayed)}</td><td>${esc(d.plugin || "")}</td><td>${esc(d.detail || "")}</td></tr>`;
        }).join("");
        status(`replayed ${new Date().toLocaleTimeString()}`);
      } catch (err) {
        status(`replay failed: ${err.message}`);
      } finally {
        button.disabled = false;
      }
    };
  }

  return { overview, pod, node, replay };
})();

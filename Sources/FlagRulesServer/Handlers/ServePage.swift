import FlagRules

/// The page `flags serve` answers `GET /` with. One file, no framework, nothing fetched from
/// elsewhere.
///
/// It shows each declaration's state without evaluating anything: its rules as written,
/// its default, each split's shares and each rollout as bars, each ramp's course as a
/// small chart with today marked, `@disabled`, its owner and expiry, and why it is stale.
/// It follows the event stream, so a reload (and a rejected update, which leaves the last
/// good rules served) shows at once. A context form evaluates every declaration with its
/// explanation. When the server asks for an API key, the page asks for it.
enum ServePage {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>flags serve</title>
        <style>
          body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 90rem; padding: 0 1rem; color: #222; }
          h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
          table { border-collapse: collapse; width: 100%; } td, th { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
          code, pre { font: 13px ui-monospace, monospace; } pre { background: #f6f6f6; padding: .5rem; overflow-x: auto; margin: .3rem 0; }
          pre.source { max-height: 12rem; overflow-y: auto; }
          form { display: grid; grid-template-columns: max-content 1fr; gap: .4rem 1rem; align-items: center; max-width: 40rem; }
          .muted { color: #777; } .error { color: #b00020; } button { padding: .4rem 1rem; }
          .badge { display: inline-block; font-size: 12px; padding: 0 .4rem; border-radius: .6rem; margin: .1rem .2rem 0 0; background: #eee; }
          .badge.disabled, .badge.expired { background: #fde2e1; color: #8a1c14; } .badge.stale { background: #fff1c2; color: #6b4f00; }
          .share-row { display: flex; align-items: center; gap: .5rem; } .caption { font-size: 12px; min-width: 7rem; }
          .bar { display: flex; width: 22rem; height: 1.2rem; margin: .25rem 0; background: #eee; border-radius: .2rem; overflow: hidden; font-size: 11px; }
          .bar .share { color: #fff; white-space: nowrap; overflow: hidden; padding: 0 .25rem; line-height: 1.2rem; }
          .ramp { display: block; margin: .25rem 0; } .ramp polyline { fill: none; stroke: #2d6cdf; stroke-width: 2; } .ramp line { stroke: #b00020; }
          .notice { padding: .4rem .6rem; margin: .3rem 0; border-radius: .3rem; } .notice.reload { background: #e4f4e4; } .notice.rejected { background: #fde2e1; } .notice.accepted { background: #e4ecf7; }
          #ask { background: #fff7d6; padding: .6rem; border-radius: .3rem; }
        </style>
        </head>
        <body>
        <h1>flags serve</h1>
        <p class="muted">Rules version <code id="version">…</code>, in force since <span id="since">…</span> · <span id="live">connecting…</span></p>
        <div id="ask" hidden><label for="key">This server asks for an API key (<code>flags serve --api-key</code>):</label>
          <input id="key" size="28" autocomplete="off"> <button id="use-key" type="button">Use key</button> <span id="key-status" class="error"></span></div>
        <div id="rejected"></div>
        <div id="notices"></div>
        <h2>Declarations</h2>
        <p id="status" class="muted"></p>
        <table id="results"><thead><tr><th>name</th><th>state</th><th>resolution</th><th>about</th></tr></thead><tbody></tbody></table>
        <h2>Context</h2>
        <form id="context"></form>
        <p><button id="evaluate" type="button">Evaluate</button> <span id="evaluated" class="muted"></span></p>
        <script>
        "use strict";
        const palette = ["#2d6cdf", "#e07b00", "#2e9d5b", "#9b4dca", "#c93c3c", "#00838f", "#7a6a00", "#5d5d5d"];
        let key = localStorage.getItem("flags-key") || "";
        let schema = {};
        let version = null;
        let evaluatedOnce = false;
        let keyGiven = null;
        function headers() {
          const h = { "Content-Type": "application/json" };
          if (key) h["X-API-Key"] = key;
          return h;
        }
        function text(tag, content, cls) { const e = document.createElement(tag); e.textContent = content; if (cls) e.className = cls; return e; }
        function badge(content, cls) { return text("span", content, "badge " + cls); }
        function percent(p) { return (Math.round(p * 10) / 10) + "%"; }
        /// The server refused the key (or there was none): ask for one, and resolve once given.
        function askForKey() {
          const ask = document.getElementById("ask");
          ask.hidden = false;
          document.getElementById("key-status").textContent = key ? "the key was refused" : "";
          document.getElementById("live").textContent = "waiting for an API key";
          document.body.dataset.askingForKey = "true";
          if (!keyGiven) keyGiven = new Promise(resolve => {
            document.getElementById("use-key").onclick = () => {
              key = document.getElementById("key").value.trim();
              localStorage.setItem("flags-key", key);
              ask.hidden = true; delete document.body.dataset.askingForKey; keyGiven = null;
              resolve();
            };
          });
          return keyGiven;
        }
        async function get(path, options) {
          for (;;) {
            const response = await fetch(path, Object.assign({ headers: headers(), cache: "no-store" }, options || {}));
            if (response.status !== 401 && response.status !== 403) return response;
            await askForKey();
          }
        }
        /// A split's shares, or a rollout's, as one bar.
        function bar(rule, shares, what) {
          const e = document.createElement("div"); e.className = "bar " + what; e.dataset.rule = rule;
          e.title = "rule " + rule + ": " + what;
          shares.forEach((s, i) => {
            const part = text("span", (s.label !== undefined ? s.label + " " : "") + percent(s.percent), "share");
            part.dataset.percent = s.percent;
            if (s.outcome !== undefined) part.dataset.outcome = JSON.stringify(s.outcome);
            part.style.width = s.percent + "%"; part.style.background = palette[i % palette.length];
            e.appendChild(part);
          });
          const row = document.createElement("div"); row.className = "share-row";
          row.append(text("span", "rule " + rule + ": " + what, "muted caption"), e);
          return row;
        }
        /// The share a ramp gives at `at` (before it: its start; after it: its end).
        function rampAt(r, at) {
          const from = Date.parse(r.from), to = Date.parse(r.to);
          if (at <= from) return r.start; if (at >= to) return r.end;
          return r.start + (r.end - r.start) * (at - from) / (to - from);
        }
        /// A ramp's course from a little before it starts to a little after it ends, today marked.
        function rampChart(r) {
          const svg = "http://www.w3.org/2000/svg", w = 220, h = 60, from = Date.parse(r.from), to = Date.parse(r.to);
          const margin = Math.max((to - from) / 4, 3600e3), t0 = from - margin, t1 = to + margin, now = Date.now();
          const x = t => (t - t0) / (t1 - t0) * w, y = p => h - 4 - p / 100 * (h - 8);
          const chart = document.createElementNS(svg, "svg");
          chart.setAttribute("class", "ramp"); chart.setAttribute("width", w); chart.setAttribute("height", h);
          chart.setAttribute("viewBox", "0 0 " + w + " " + h);
          chart.dataset.rule = r.rule; chart.dataset.from = r.from; chart.dataset.to = r.to;
          chart.dataset.start = r.start; chart.dataset.end = r.end; chart.dataset.now = rampAt(r, now);
          const line = document.createElementNS(svg, "polyline");
          line.setAttribute("points", [[0, r.start], [x(from), r.start], [x(to), r.end], [w, r.end]].map(([px, p]) => px + "," + y(p)).join(" "));
          chart.appendChild(line);
          if (now > t0 && now < t1) {
            const mark = document.createElementNS(svg, "line");
            mark.setAttribute("x1", x(now)); mark.setAttribute("x2", x(now)); mark.setAttribute("y1", 0); mark.setAttribute("y2", h);
            chart.appendChild(mark);
          }
          const title = document.createElementNS(svg, "title");
          title.textContent = "rule " + r.rule + ": " + percent(r.start) + " on " + r.from + " to " + percent(r.end) + " on " + r.to;
          chart.appendChild(title);
          const box = document.createElement("div"); box.className = "share-row";
          box.appendChild(text("span", "rule " + r.rule + ": ramp", "muted caption"));
          box.appendChild(chart);
          box.appendChild(text("span", percent(r.start) + " → " + percent(r.end) + ", " + r.from.slice(0, 10) + " – " + r.to.slice(0, 10) + "; today " + percent(rampAt(r, now)), "muted"));
          return box;
        }
        function stateCell(d) {
          const cell = document.createElement("td"); cell.className = "state";
          const shown = d.kind === "variant" ? d.default : JSON.stringify(d.default);
          // What everyone gets, when the rules decide it for everyone: a kill switch (a
          // @disabled flag is off, anything else its default) or a declaration without rules.
          if (d.disabled || d.rules === 0) {
            const everyone = d.disabled && d.kind === "flag" ? "false" : shown;
            const line = text("span", "everyone gets ", "muted"); line.appendChild(text("strong", everyone, "everyone"));
            if (d.disabled) line.appendChild(text("span", " (@disabled; default " + shown + ")", "muted default-aside"));
            cell.appendChild(line);
          } else {
            const line = text("span", "default ", "muted"); line.appendChild(text("strong", shown, "default")); cell.appendChild(line);
          }
          for (const s of d.splits || []) cell.appendChild(bar(s.rule, s.shares.map(x => ({ label: typeof x.outcome === "string" ? x.outcome : JSON.stringify(x.outcome), outcome: x.outcome, percent: x.percent })), "split"));
          for (const r of d.rollouts || []) cell.appendChild(bar(r.rule, [{ percent: r.percent }], "rollout"));
          for (const r of d.ramps || []) cell.appendChild(rampChart(r));
          cell.appendChild(text("pre", d.source, "source"));
          return cell;
        }
        function nameCell(d) {
          const cell = document.createElement("td");
          cell.appendChild(text("code", d.name)); cell.appendChild(document.createElement("br"));
          cell.appendChild(text("span", d.kind + " · " + d.type + " · " + d.file + ":" + d.line, "muted")); cell.appendChild(document.createElement("br"));
          if (d.disabled) cell.appendChild(badge("@disabled", "disabled"));
          if (d.owner) { const b = badge("owner " + d.owner, "owner"); b.dataset.owner = d.owner; cell.appendChild(b); }
          if (d.expires) {
            const past = Date.parse(d.expires + "T00:00:00Z") <= Date.now();
            const b = badge((past ? "expired " : "expires ") + d.expires, past ? "expires expired" : "expires"); b.dataset.expires = d.expires;
            cell.appendChild(b);
          }
          for (const s of d.stale) { const b = badge("stale: " + s.detail, "stale"); b.dataset.code = s.code; cell.appendChild(b); }
          return cell;
        }
        async function load() {
          const status = document.getElementById("status");
          const response = await get("/api/rules");
          if (!response.ok) { status.textContent = "rules: HTTP " + response.status; status.className = "error"; return; }
          const rules = await response.json();
          version = rules.version;
          document.getElementById("version").textContent = rules.version;
          document.getElementById("since").textContent = new Date(rules.since * 1000).toISOString().replace(".000", "");
          const rejected = document.getElementById("rejected");
          rejected.replaceChildren();
          for (const r of rules.rejected) {
            const p = text("p", r.file + ": the update of " + new Date(r.at * 1000).toISOString().replace(".000", "") + " was rejected, and its last good rules are served. " + r.message, "notice rejected standing");
            p.dataset.file = r.file; rejected.appendChild(p);
          }
          const previous = {};
          for (const input of document.querySelectorAll("#context [name]")) previous[input.name] = input.value;
          schema = rules.schema;
          const form = document.getElementById("context");
          form.replaceChildren();
          for (const [name, field] of Object.entries(schema)) {
            const label = text("label", name + " "); label.appendChild(text("span", field.type, "muted")); label.htmlFor = "attr-" + name;
            let input;
            if (field.cases && !field.list) {
              input = document.createElement("select");
              input.appendChild(new Option("(absent)", ""));
              for (const c of field.cases) input.appendChild(new Option(c, c));
            } else if (field.type === "bool") {
              input = document.createElement("select");
              for (const [t, v] of [["(absent)", ""], ["true", "true"], ["false", "false"]]) input.appendChild(new Option(t, v));
            } else {
              input = document.createElement("input");
              input.placeholder = field.list ? "comma-separated" : name === "now" ? "the clock, or 2026-12-01T09:00:00Z" : field.type;
            }
            input.id = "attr-" + name; input.name = name;
            if (previous[name] !== undefined) input.value = previous[name];
            form.append(label, input);
          }
          const body = document.querySelector("#results tbody");
          body.replaceChildren();
          for (const d of rules.declarations) {
            const row = document.createElement("tr"); row.dataset.name = d.name; row.dataset.kind = d.kind;
            row.dataset.default = JSON.stringify(d.default); row.dataset.disabled = d.disabled;
            if (d.variants) row.dataset.variants = JSON.stringify(d.variants);
            const result = document.createElement("td"); result.className = "result"; result.appendChild(text("span", "—", "muted"));
            row.append(nameCell(d), stateCell(d), result, text("td", d.doc || "")); body.appendChild(row);
          }
          status.textContent = rules.declarations.length + " declarations"; status.className = "muted";
          if (evaluatedOnce) await evaluate();
        }
        function contextFromForm() {
          const context = {};
          for (const [name, field] of Object.entries(schema)) {
            const raw = document.getElementById("attr-" + name).value.trim();
            if (raw === "") continue;
            if (field.list) {
              const items = raw.split(",").map(s => s.trim()).filter(s => s !== "");
              context[name] = field.type === "[int]" ? items.map(Number) : items;
            } else if (field.type === "int" || field.type === "double") context[name] = Number(raw);
            else if (field.type === "bool") context[name] = raw === "true";
            else context[name] = raw;
          }
          return context;
        }
        async function evaluate() {
          const status = document.getElementById("evaluated");
          const response = await get("/api/evaluate", { method: "POST", body: JSON.stringify({ context: contextFromForm() }) });
          if (!response.ok) { status.textContent = "evaluate: HTTP " + response.status; status.className = "error"; return; }
          const results = await response.json();
          for (const row of document.querySelectorAll("#results tbody tr")) {
            const r = results[row.dataset.name]; if (!r) continue;
            const cell = row.querySelector(".result"); cell.replaceChildren();
            const shown = r.resolution.variant !== undefined ? r.resolution.variant : JSON.stringify(r.resolution.value);
            cell.appendChild(text("strong", shown)); cell.appendChild(text("span", " " + r.resolution.reason, "muted"));
            const raw = text("code", JSON.stringify(r.resolution), "resolution"); raw.hidden = true; cell.appendChild(raw);
            if (r.explanation) { const details = document.createElement("details"); details.appendChild(text("summary", "why"));
              details.appendChild(text("pre", r.explanation)); cell.appendChild(details); }
          }
          evaluatedOnce = true;
          status.textContent = "evaluated"; status.className = "muted";
          document.body.dataset.evaluated = "true";
        }
        function notice(message, cls, data) {
          const p = text("p", new Date().toISOString().slice(11, 19) + " " + message, "notice " + cls);
          Object.assign(p.dataset, data);
          const notices = document.getElementById("notices");
          notices.prepend(p);
          while (notices.children.length > 5) notices.lastChild.remove();
        }
        /// One server-sent event: a new version is reloaded at once; a rejected update is shown,
        /// and so is its clearing (a fix, or the last good text restored).
        async function received(block) {
          const data = block.split("\n").filter(l => l.startsWith("data:")).map(l => l.slice(5).trimStart()).join("\n");
          if (!data) return;
          let event; try { event = JSON.parse(data); } catch { return; }
          if (event.type === "refetchEvaluation" && event.etag !== version) {
            await load();
            notice("rules reloaded: version " + version, "reload", { version: version });
          } else if (event.type === "rulesRejected") {
            await load();
            notice(event.file + ": an update was rejected; the last good rules are served. " + event.message, "rejected", { file: event.file });
          } else if (event.type === "rulesAccepted") {
            await load();
            notice(event.file + ": its rejected update no longer stands; good rules are in force", "accepted", { file: event.file });
          }
        }
        /// Follows the event stream, reconnecting a second after it ends (telling the server
        /// the version shown, so a change made meanwhile arrives at once).
        async function follow() {
          const live = document.getElementById("live");
          for (;;) {
            try {
              const h = headers(); if (version) h["Last-Event-ID"] = version;
              const response = await fetch("/ofrep/v1/events", { headers: h, cache: "no-store" });
              if (response.status === 401 || response.status === 403) { await askForKey(); continue; }
              if (!response.ok || !response.body) throw new Error("HTTP " + response.status);
              live.textContent = "following changes"; document.body.dataset.following = "true";
              const reader = response.body.getReader(), decoder = new TextDecoder();
              let buffer = "";
              for (;;) {
                const { value, done } = await reader.read();
                if (done) break;
                buffer = (buffer + decoder.decode(value, { stream: true })).replace(/\r\n?/g, "\n");
                let end;
                while ((end = buffer.indexOf("\n\n")) >= 0) { const block = buffer.slice(0, end); buffer = buffer.slice(end + 2); await received(block); }
              }
            } catch (error) { /* reconnect below */ }
            delete document.body.dataset.following;
            live.textContent = "reconnecting…";
            await new Promise(resolve => setTimeout(resolve, 1000));
          }
        }
        /// A link's ?context={…} fills the form and evaluates it (a shareable question).
        function fillFromLink() {
          const given = new URLSearchParams(location.search).get("context");
          if (!given) return false;
          const context = JSON.parse(given);
          for (const [name, value] of Object.entries(context)) {
            const input = document.getElementById("attr-" + name);
            if (input) input.value = Array.isArray(value) ? value.join(", ") : String(value);
          }
          return true;
        }
        document.getElementById("evaluate").addEventListener("click", evaluate);
        load().then(async () => {
          if (fillFromLink()) await evaluate();
          document.body.dataset.loaded = "true";
          follow();
        });
        </script>
        </body>
        </html>

        """#
}

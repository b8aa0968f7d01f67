import FlagRules

/// The page `flags serve` answers `GET /` with: the declarations in force with their docs
/// and owners, a context form typed by the schema, and each declaration's resolution with
/// its explanation. One file, no framework, nothing fetched from elsewhere.
enum ServePage {
    static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>flags serve</title>
        <style>
          body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; padding: 0 1rem; color: #222; }
          h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
          table { border-collapse: collapse; width: 100%; } td, th { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
          code, pre { font: 13px ui-monospace, monospace; } pre { background: #f6f6f6; padding: .5rem; overflow-x: auto; margin: .3rem 0; }
          form { display: grid; grid-template-columns: max-content 1fr; gap: .4rem 1rem; align-items: center; max-width: 40rem; }
          .muted { color: #777; } .error { color: #b00020; } button { padding: .4rem 1rem; }
        </style>
        </head>
        <body>
        <h1>flags serve</h1>
        <p class="muted">Rules version <code id="version">…</code> · API key <input id="key" size="24" placeholder="(none)"></p>
        <h2>Context</h2>
        <form id="context"></form>
        <p><button id="evaluate" type="button">Evaluate</button> <span id="status" class="muted"></span></p>
        <h2>Declarations</h2>
        <table id="results"><thead><tr><th>name</th><th>resolution</th><th>about</th></tr></thead><tbody></tbody></table>
        <script>
        "use strict";
        const keyField = document.getElementById("key");
        keyField.value = localStorage.getItem("flags-key") || "";
        keyField.addEventListener("change", () => { localStorage.setItem("flags-key", keyField.value); load(); });
        function headers() {
          const h = { "Content-Type": "application/json" };
          if (keyField.value) h["X-API-Key"] = keyField.value;
          return h;
        }
        let schema = {};
        function text(tag, content, cls) { const e = document.createElement(tag); e.textContent = content; if (cls) e.className = cls; return e; }
        async function load() {
          const status = document.getElementById("status");
          const response = await fetch("/api/rules", { headers: headers() });
          if (!response.ok) { status.textContent = "rules: HTTP " + response.status; status.className = "error"; return; }
          const rules = await response.json();
          document.getElementById("version").textContent = rules.version;
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
            form.append(label, input);
          }
          const body = document.querySelector("#results tbody");
          body.replaceChildren();
          for (const d of rules.declarations) {
            const row = document.createElement("tr"); row.dataset.name = d.name;
            const name = document.createElement("td"); name.appendChild(text("code", d.name)); name.appendChild(document.createElement("br"));
            name.appendChild(text("span", d.kind + " · " + d.type + (d.owner ? " · " + d.owner : ""), "muted"));
            const result = document.createElement("td"); result.className = "result"; result.appendChild(text("span", "—", "muted"));
            const about = text("td", d.doc || "");
            row.append(name, result, about); body.appendChild(row);
          }
          status.textContent = rules.declarations.length + " declarations"; status.className = "muted";
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
          const status = document.getElementById("status");
          const response = await fetch("/api/evaluate", { method: "POST", headers: headers(), body: JSON.stringify({ context: contextFromForm() }) });
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
          status.textContent = "evaluated"; status.className = "muted";
          document.body.dataset.evaluated = "true";
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
        load().then(() => {
          document.body.dataset.loaded = "true";
          if (fillFromLink()) evaluate();
        });
        </script>
        </body>
        </html>

        """
}

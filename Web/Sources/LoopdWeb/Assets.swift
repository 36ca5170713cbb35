/// The stylesheet and the script, served by the dashboard itself (no CDN:
/// it works on a host without network access).
enum Assets {
    static let css = #"""
        :root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #5a636e; --line: #d6dbe0;
          --accent: #0b5cad; --ok: #1a7f37; --bad: #b3261e; --warn: #8a5a00; --s1: #0b5cad; --s2: #8a5a00; --s3: #b3261e; }
        @media (prefers-color-scheme: dark) { :root { --fg: #e6e8eb; --bg: #15181c; --muted: #a0a8b2; --line: #343a42;
          --accent: #6cb1ff; --ok: #4cc36a; --bad: #ff7b72; --warn: #e3b341; --s1: #6cb1ff; --s2: #e3b341; --s3: #ff7b72; } }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
        a { color: var(--accent); }
        a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, .scroll:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        .skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: var(--bg); padding: 4px 8px; z-index: 2; }
        .sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
        header { display: flex; flex-wrap: wrap; gap: 8px 24px; align-items: center; padding: 10px 20px; border-bottom: 1px solid var(--line); }
        .brand { font-weight: 700; font-size: 18px; text-decoration: none; color: var(--fg); }
        nav ul { display: flex; flex-wrap: wrap; gap: 4px 16px; list-style: none; margin: 0; padding: 0; }
        nav a[aria-current=page] { font-weight: 700; text-decoration: none; color: var(--fg); border-bottom: 2px solid var(--accent); }
        .who { margin-left: auto; display: flex; gap: 8px; align-items: center; color: var(--muted); }
        main { padding: 12px 20px 40px; max-width: 1400px; margin: 0 auto; }
        .heading { display: flex; align-items: baseline; gap: 16px; flex-wrap: wrap; }
        h1 { font-size: 22px; margin: 8px 0; } h2 { font-size: 17px; margin: 20px 0 8px; } h3 { font-size: 15px; margin: 12px 0 4px; }
        .live-status { color: var(--muted); font-size: 13px; }
        .totals { display: grid; grid-template-columns: repeat(auto-fit, minmax(120px, 1fr)); gap: 8px; margin: 8px 0; }
        .totals div { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; }
        .totals dt { color: var(--muted); font-size: 13px; } .totals dd { margin: 0; font-size: 22px; font-variant-numeric: tabular-nums; }
        .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 12px; }
        .chart { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 8px; }
        .chart figcaption { font-weight: 600; } .chart svg { width: 100%; height: auto; display: block; }
        .chart .line { fill: none; stroke-width: 2; vector-effect: non-scaling-stroke; }
        .s1 { stroke: var(--s1); background: var(--s1); } .s2 { stroke: var(--s2); background: var(--s2); } .s3 { stroke: var(--s3); background: var(--s3); }
        .grid { stroke: var(--line); stroke-width: 1; vector-effect: non-scaling-stroke; } .axis { fill: var(--muted); font-size: 11px; }
        .legend { display: flex; gap: 12px; list-style: none; padding: 0; margin: 4px 0 0; font-size: 13px; }
        .key { display: inline-block; width: 12px; height: 3px; margin-right: 4px; vertical-align: middle; }
        .scroll { overflow-x: auto; }
        table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
        th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; white-space: nowrap; }
        td:nth-last-child(2):not(:first-child) { white-space: normal; }
        thead th { color: var(--muted); font-weight: 600; font-size: 13px; }
        .mono, code, pre { font-family: ui-monospace, monospace; font-size: 13px; }
        .state { padding: 1px 6px; border-radius: 4px; border: 1px solid var(--line); font-size: 13px; }
        .state.completed { color: var(--ok); } .state.failed, .state.timed_out, .state.expired { color: var(--bad); }
        .state.running { color: var(--accent); } .state.held, .state.delayed { color: var(--warn); }
        .stalled { color: var(--bad); }
        .fields { display: grid; grid-template-columns: repeat(auto-fit, minmax(260px, 1fr)); gap: 4px 16px; }
        .fields div { border-bottom: 1px solid var(--line); padding: 4px 0; } .fields dt { color: var(--muted); font-size: 13px; } .fields dd { margin: 0; overflow-wrap: anywhere; }
        .args { margin: 0; padding-left: 20px; }
        pre.output { background: color-mix(in srgb, var(--line) 35%, transparent); padding: 8px; border-radius: 6px; overflow-x: auto; max-height: 480px; white-space: pre-wrap; overflow-wrap: anywhere; }
        form.inline { display: inline-flex; gap: 4px; align-items: center; margin: 0; }
        .filters { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: end; margin: 8px 0; }
        .filters label { display: flex; flex-direction: column; font-size: 13px; color: var(--muted); }
        button { font: inherit; padding: 3px 10px; border-radius: 5px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); cursor: pointer; }
        button.danger { color: var(--bad); border-color: var(--bad); }
        input, select { font: inherit; padding: 3px 6px; border-radius: 5px; border: 1px solid var(--line); background: var(--bg); color: var(--fg); }
        .login { display: flex; flex-direction: column; gap: 8px; max-width: 320px; }
        .notice { padding: 8px 12px; border-left: 4px solid var(--ok); background: color-mix(in srgb, var(--ok) 10%, transparent); }
        .error { padding: 8px 12px; border-left: 4px solid var(--bad); background: color-mix(in srgb, var(--bad) 10%, transparent); }
        .empty { color: var(--muted); } .actions { display: flex; gap: 8px; margin: 8px 0; } .paging { display: flex; gap: 16px; margin: 12px 0; }
        @media (max-width: 600px) { header, main { padding-left: 10px; padding-right: 10px; } .who { margin-left: 0; } .totals dd { font-size: 18px; } }
        """#

    static let js = #"""
        // loopd-web: instants in the viewer's zone (UTC stays in the title),
        // and the page's live part replaced by each server-sent update.
        "use strict";
        function localTimes(root) {
          for (const t of root.querySelectorAll("time[datetime]")) {
            const d = new Date(t.getAttribute("datetime"));
            if (!isNaN(d)) t.textContent = d.toLocaleString();
          }
        }
        document.addEventListener("DOMContentLoaded", () => {
          localTimes(document);
          const live = document.getElementById("live");
          const status = document.getElementById("live-status");
          if (!live || !window.EventSource) return;
          let pending = null;
          const apply = html => { live.innerHTML = html; localTimes(live); };
          // An update waits while a field of the live part has the focus, so
          // typing a mode name is not undone.
          live.addEventListener("focusout", () => setTimeout(() => {
            if (pending !== null && !live.contains(document.activeElement)) { apply(pending); pending = null; }
          }, 0));
          const source = new EventSource(live.dataset.live);
          source.addEventListener("update", e => {
            if (live.contains(document.activeElement) && document.activeElement.matches("input, select")) pending = e.data;
            else apply(e.data);
            status.textContent = "live";
          });
          source.addEventListener("open", () => { status.textContent = "live"; });
          source.addEventListener("error", () => { status.textContent = "reconnecting…"; });
        });
        """#
}

import Foundation
import LoopdClient

/// What every page needs to know of the request it answers.
struct PageContext: Sendable {
    /// The path and query the page was asked for (the live stream renders
    /// it again; a form's action returns there).
    var target: String
    /// The CSRF token of the operator's session; nil when no one is logged in.
    var csrf: String?
    /// Whether the dashboard has a password at all.
    var actionsEnabled: Bool
    /// A line to show once, after an action (`?notice=`).
    var notice: String?

    var loggedIn: Bool { csrf != nil }
}

enum Layout {
    static let sections: [(path: String, title: String)] = [
        ("/", "Overview"), ("/jobs", "Jobs"), ("/failed", "Failed"), ("/schedules", "Schedules"),
    ]

    /// A whole page. `live` is the part the live stream replaces; pages
    /// without one pass nil.
    static func page(title: String, context: PageContext, heading: HTML, live: HTML?, static body: HTML = "") -> HTML {
        let path = context.target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/"
        let nav: [HTML] = sections.map { s in
            let current = s.path == "/" ? path == "/" : path.hasPrefix(s.path)
            return current ? "<li><a href=\"\(s.path)\" aria-current=\"page\">\(s.title)</a></li>"
                : "<li><a href=\"\(s.path)\">\(s.title)</a></li>"
        }
        let who: HTML
        if context.loggedIn, let csrf = context.csrf {
            who = "<span>Operator</span> <form method=\"post\" action=\"/logout\" class=\"inline\">\(csrfField(csrf))<button type=\"submit\">Log out</button></form>"
        } else if context.actionsEnabled {
            who = "<span>Read-only</span> <a href=\"/login?return=\(percentEncoded(context.target))\">Log in</a>"
        } else {
            who = "<span>Read-only</span>"
        }
        let notice: HTML = context.notice.map { "<p class=\"notice\" role=\"status\">\($0)</p>" } ?? ""
        let liveBlock: HTML = live.map {
            "<div id=\"live\" data-live=\"/live?page=\(percentEncoded(context.target))&amp;seen=\($0.digest)\" aria-live=\"off\">\($0)</div>"
        } ?? ""
        let liveStatus: HTML = live == nil ? "" : "<span id=\"live-status\" class=\"live-status\">updates paused</span>"
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · loopd</title>
            <link rel="stylesheet" href="/assets/app.css">
            <script src="/assets/app.js" defer></script>
            </head><body>
            <a class="skip" href="#main">Skip to content</a>
            <header><a class="brand" href="/">loopd</a>
            <nav aria-label="Sections"><ul>\(nav)</ul></nav>
            <div class="who">\(who)</div></header>
            <main id="main"><div class="heading"><h1>\(heading)</h1>\(liveStatus)</div>
            \(notice)\(body)\(liveBlock)</main>
            </body></html>
            """
    }

    /// The hidden field every state-changing form carries.
    static func csrfField(_ token: String) -> HTML { "<input type=\"hidden\" name=\"csrf\" value=\"\(token)\">" }

    /// A one-button form posting to `action`, when an operator is logged in.
    static func button(_ label: String, action: String, context: PageContext, extra: HTML = "", danger: Bool = false) -> HTML {
        guard let csrf = context.csrf else { return "" }
        let cls = danger ? "danger" : ""
        return "<form method=\"post\" action=\"\(action)\" class=\"inline\">\(csrfField(csrf))<input type=\"hidden\" name=\"return\" value=\"\(context.target)\">\(extra)<button type=\"submit\" class=\"\(cls)\">\(label)</button></form>"
    }

    /// A job id linked to its page.
    static func jobLink(_ id: String) -> HTML { "<a class=\"mono\" href=\"/jobs/\(percentEncoded(id))\">\(id)</a>" }

    static func state(_ s: JobState) -> HTML { "<span class=\"state \(s.rawValue)\">\(s.rawValue.replacingOccurrences(of: "_", with: " "))</span>" }

    /// A table in a wrapper that scrolls sideways on a narrow screen.
    static func table(caption: String, head: [String], rows: [HTML], empty: String) -> HTML {
        let th: [HTML] = head.map { "<th scope=\"col\">\($0)</th>" }
        guard !rows.isEmpty else { return "<section><h2>\(caption)</h2><p class=\"empty\">\(empty)</p></section>" }
        return "<section><h2>\(caption)</h2><div class=\"scroll\" tabindex=\"0\" role=\"region\" aria-label=\"\(caption)\"><table><thead><tr>\(th)</tr></thead><tbody>\(rows)</tbody></table></div></section>"
    }

    /// The page shown when loopd did not answer or refused.
    static func failure(_ error: any Error) -> HTML {
        "<p class=\"error\" role=\"alert\">loopd did not answer: \(String(describing: error))</p>"
    }
}

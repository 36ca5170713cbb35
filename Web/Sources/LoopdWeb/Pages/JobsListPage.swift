import Foundation
import LoopdClient

/// `/jobs` (every state, or the one chosen) and `/failed` (the failures,
/// with retry): filters, and pages in submission order.
enum JobsListPage {
    /// The filters a list was asked for, from its query string.
    struct Filter: Sendable, Equatable {
        var state: String?
        var worker: String?
        var action: String?
        /// `15m`, `1h`, `24h`, or nil for every retained job.
        var since: String?
        var cursor: String?
        /// Jobs a page: one of `limitChoices`.
        var limit: Int

        static let limitChoices = [25, 50, 100, 200]
        static let defaultLimit = 50

        init(state: String? = nil, worker: String? = nil, action: String? = nil, since: String? = nil,
             cursor: String? = nil, limit: Int = Filter.defaultLimit) {
            self.state = state
            self.worker = worker
            self.action = action
            self.since = since
            self.cursor = cursor
            self.limit = Self.limitChoices.contains(limit) ? limit : Self.defaultLimit
        }

        /// The filters of a query string, read by `param` (nil for an absent or empty one).
        init(_ param: (String) -> String?) {
            self.init(state: param("state"), worker: param("worker"), action: param("action"), since: param("since"),
                      cursor: param("cursor"), limit: param("limit").flatMap { Int($0) } ?? Self.defaultLimit)
        }

        static let sinceChoices: [(value: String, label: String, seconds: TimeInterval)] = [
            ("15m", "last 15 minutes", 900), ("1h", "last hour", 3600), ("24h", "last 24 hours", 86400),
        ]

        /// The query for loopd; `failures` lists the failure states when no
        /// state is chosen. Throws for a state loopd does not have.
        func query(failures: Bool, now: Date = Date()) throws(WebError) -> JobsQuery {
            var states: [JobState]?
            if let state {
                guard let s = JobState(rawValue: state) else { throw .config("no job state is called \(state)") }
                states = [s]
            } else if failures {
                states = JobState.failures
            }
            let seconds = Self.sinceChoices.first { $0.value == since }?.seconds
            return JobsQuery(states: states, worker: worker, action: action,
                             submittedSinceUnixMs: seconds.map { Int64(((now.timeIntervalSince1970 - $0) * 1000).rounded()) },
                             limit: limit, cursor: cursor)
        }

        func link(path: String, cursor: String?) -> String {
            let size = limit == Self.defaultLimit ? nil : String(limit)
            return path + queryString([("state", state), ("worker", worker), ("action", action), ("since", since),
                                       ("limit", size), ("cursor", cursor)])
        }
    }

    static func row(_ j: JobStatus) -> HTML {
        "<tr><td>\(Layout.jobLink(j.job))</td><td>\(Layout.state(j.state))</td><td>\(j.action ?? "")</td><td>\(j.worker ?? "")</td><td>\(TimeText.element(j.submittedAt))</td><td>\(j.runMs.map { TimeText.duration(ms: $0) } ?? "–")</td></tr>"
    }

    static func failedRow(_ j: JobStatus, context: PageContext) -> HTML {
        let retry: HTML = j.retriedAs.map { "retried as \(Layout.jobLink($0))" }
            ?? Layout.button("Retry", action: "/jobs/\(percentEncoded(j.job))/retry", context: context)
        return "<tr><td>\(Layout.jobLink(j.job))</td><td>\(Layout.state(j.state))</td><td>\(j.action ?? "")</td><td>\(j.worker ?? "")</td><td>\(TimeText.element(j.finishedAt))</td><td>\(j.error?.message ?? "")</td><td>\(retry)</td></tr>"
    }

    /// The filter form (a GET form: no token needed, changes nothing).
    static func form(_ f: Filter, path: String, failures: Bool, workers: [String]) -> HTML {
        let states = (failures ? JobState.failures : JobState.allCases).map(\.rawValue)
        func options(_ values: [(String, String)], selected: String?) -> HTML {
            HTML.joined(values.map { v, label in
                v == (selected ?? "") ? "<option value=\"\(v)\" selected>\(label)</option>" : "<option value=\"\(v)\">\(label)</option>"
            })
        }
        return """
            <form method="get" action="\(path)" class="filters" role="search" aria-label="Filter jobs">\
            <label>State <select name="state">\(options([("", failures ? "any failure" : "any")] + states.map { ($0, $0) }, selected: f.state))</select></label>\
            <label>Worker <select name="worker">\(options([("", "any")] + workers.map { ($0, $0) }, selected: f.worker))</select></label>\
            <label>Action <input name="action" value="\(f.action ?? "")" size="12"></label>\
            <label>Submitted <select name="since">\(options([("", "any time")] + Filter.sinceChoices.map { ($0.value, $0.label) }, selected: f.since))</select></label>\
            <label>Per page <select name="limit">\(options(Filter.limitChoices.map { (String($0), String($0)) }, selected: String(f.limit)))</select></label>\
            <button type="submit">Filter</button></form>
            """
    }

    static func live(_ page: JobsPage, filter: Filter, path: String, failures: Bool, context: PageContext) -> HTML {
        let table = failures
            ? Layout.table(caption: "Failed jobs", head: ["Job", "State", "Action", "Worker", "Ended", "Error", ""],
                           rows: page.jobs.map { failedRow($0, context: context) }, empty: "No failed job matches.")
            : Layout.table(caption: "Jobs", head: ["Job", "State", "Action", "Worker", "Submitted", "Ran"],
                           rows: page.jobs.map(row), empty: "No job matches.")
        var links: [HTML] = []
        if filter.cursor != nil { links.append("<a href=\"\(filter.link(path: path, cursor: nil))\">First page</a>") }
        if let next = page.nextCursor { links.append("<a href=\"\(filter.link(path: path, cursor: next))\" rel=\"next\">Next page</a>") }
        let paging: HTML = links.isEmpty ? "" : "<nav class=\"paging\" aria-label=\"Pages\">\(HTML.joined(links, separator: " "))</nav>"
        return "\(table)\(paging)"
    }
}

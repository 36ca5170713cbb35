import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import LoopdClient
import LoopPlatform

/// The dashboard's HTTP routes over a `DaemonView`.
///
/// Reading needs no login; every POST needs an operator's session cookie
/// and its CSRF token, and is refused (403) otherwise. Every response
/// carries a Content-Security-Policy that allows this origin only: the
/// pages load nothing from elsewhere and work on an air-gapped host.
public struct Dashboard: Sendable {
    let daemon: DaemonView
    let operators: Operators
    /// Mark cookies `Secure` (the dashboard is served over HTTPS by a proxy).
    let secureCookies: Bool

    static let sessionCookie = "loopd_web_session"
    static let loginCookie = "loopd_web_login"
    static let maxFormBytes = 16 << 10

    public init(daemon: DaemonView, operators: Operators, secureCookies: Bool) {
        self.daemon = daemon
        self.operators = operators
        self.secureCookies = secureCookies
    }

    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: SecurityHeaders())
        // The pages: each renders its path through `livePart`, as the live stream does.
        for page in ["/", "/jobs", "/failed", "/jobs/:id", "/schedules"] {
            router.get(RouterPath(page)) { request, _ in await self.render(request) }
        }
        router.get("/live") { request, _ in self.live(request) }
        router.get("/login") { request, _ in self.loginForm(request, message: nil) }
        router.post("/login") { request, _ in try await self.login(request) }
        router.post("/logout") { request, _ in try await self.act(request) { _ in
            self.operators.logout(request.cookies[Self.sessionCookie]?.value)
            return .redirect("/")
        } }
        router.post("/jobs/:id/cancel") { request, context in
            let id = context.parameters.get("id") ?? ""
            return try await self.act(request) { _ in
                let outcome = try await self.daemon.client.cancel(job: id)
                return .done("/jobs/\(percentEncoded(id))", outcome.cancelled ? "Cancelled \(id)." : "\(id) had already ended.")
            }
        }
        router.post("/jobs/:id/retry") { request, context in
            let id = context.parameters.get("id") ?? ""
            return try await self.act(request) { form in
                let newJob = try await self.daemon.client.retry(job: id)
                return .done(form.returnTo ?? "/jobs/\(percentEncoded(newJob))", "Retried \(id) as \(newJob).")
            }
        }
        router.post("/workers/:name/mode") { request, context in
            let name = context.parameters.get("name") ?? ""
            return try await self.act(request) { form in
                let mode = form.mode ?? ""
                let change = try await self.daemon.client.mode(worker: name, mode: mode)
                return .done(form.returnTo ?? "/", "\(name) now runs in mode \(change.mode) (was \(change.previous)).")
            }
        }
        router.post("/schedules/:name/:command") { request, context in
            let name = context.parameters.get("name") ?? ""
            let command = context.parameters.get("command") ?? ""
            return try await self.act(request) { form in
                guard let c = ScheduleCommand(rawValue: command) else { return .done("/schedules", "No such schedule command: \(command).") }
                let change = try await self.daemon.client.schedule(c, name)
                let what = change.job.map { "submitted \($0)" } ?? (change.paused ? "paused" : "resumed")
                return .done(form.returnTo ?? "/schedules", "Schedule \(name): \(what).")
            }
        }
        router.get("/assets/app.css") { _, _ in Self.asset(Assets.css, type: "text/css; charset=utf-8") }
        router.get("/assets/app.js") { _, _ in Self.asset(Assets.js, type: "text/javascript; charset=utf-8") }
        return router
    }

    // MARK: Pages

    func context(_ request: Request) -> PageContext {
        let session = operators.session(request.cookies[Self.sessionCookie]?.value)
        let notice = request.uri.queryParameters.get("notice").map { String($0) }
        return PageContext(target: Self.target(request), csrf: session?.csrf, actionsEnabled: operators.actionsEnabled,
                           notice: notice)
    }

    /// The path and query of the request, without a `notice`.
    static func target(_ request: Request) -> String {
        let path = request.uri.path
        let kept = request.uri.queryParameters.filter { $0.key != "notice" }.map { (String($0.key), Optional(String($0.value))) }
        return path + queryString(kept)
    }

    /// A page's live part for `target` (a path and query), as the page
    /// itself renders it and as the live stream renders it again: the one
    /// place that maps a path to what it shows.
    func livePart(target: String, context: PageContext) async -> (status: HTTPResponse.Status, title: String, heading: HTML, html: HTML) {
        let uri = URI(target)
        let path = uri.path
        let q = uri.queryParameters
        func param(_ k: String) -> String? { q.get(k).map { String($0) }.flatMap { $0.isEmpty ? nil : $0 } }
        do {
            switch path {
            case "/":
                let range = param("range").flatMap(ChartRange.init(rawValue:)) ?? .minutes
                return (.ok, "Overview", "Overview", OverviewPage.live(try await daemon.overview(range: range), context: context))
            case "/jobs", "/failed":
                let failures = path == "/failed"
                let filter = JobsListPage.Filter(param)
                let page = try await daemon.jobs(try filter.query(failures: failures))
                let title = failures ? "Failed jobs" : "Jobs"
                return (.ok, title, "\(title)", JobsListPage.live(page, filter: filter, path: path, failures: failures, context: context))
            case "/schedules":
                return (.ok, "Schedules", "Schedules", SchedulesPage.live(try await daemon.schedules(), context: context))
            case _ where path.hasPrefix("/jobs/"):
                let id = String(path.dropFirst("/jobs/".count))
                let job = try await daemon.job(id)
                return (.ok, "Job \(id)", "Job <span class=\"mono\">\(id)</span>", JobPage.live(job, context: context, owner: job.submittedBy.flatMap(Self.userName)))
            default:
                return (.notFound, "Not found", "Not found", "<p>No page is at \(path).</p>")
            }
        } catch let error as LoopdError where error.code == .unknownJob {
            return (.notFound, "Unknown job", "Unknown job", "<p class=\"error\" role=\"alert\">\(error.message)</p>")
        } catch let error as WebError {
            return (.badRequest, "Bad request", "Bad request", "<p class=\"error\" role=\"alert\">\(error.description)</p>")
        } catch {
            return (.serviceUnavailable, "loopd unavailable", "loopd is not answering", Layout.failure(error))
        }
    }

    func render(_ request: Request) async -> Response {
        let context = context(request)
        let part = await livePart(target: context.target, context: context)
        let path = request.uri.path
        var body: HTML = ""
        if path == "/jobs" || path == "/failed" {
            let workers = (try? await daemon.client.workers().map(\.name)) ?? []
            let q = request.uri.queryParameters
            let filter = JobsListPage.Filter { k in q.get(k).map { String($0) }.flatMap { $0.isEmpty ? nil : $0 } }
            body = JobsListPage.form(filter, path: path, failures: path == "/failed", workers: workers)
        }
        let ok = part.status == .ok
        let staticPart: HTML = ok ? body : "\(body)\(part.html)"
        let page = Layout.page(title: part.title, context: context, heading: part.heading,
                               live: ok ? part.html : nil, static: staticPart)
        return Self.html(page, status: part.status)
    }

    // MARK: Live updates

    /// `/live?page=TARGET&seen=DIGEST`: server-sent events, each an `update`
    /// carrying the page's live part as HTML, sent when it changed since the
    /// last one (at first: since the render the page came with, whose digest
    /// is `seen`, so a button is not replaced under the pointer for
    /// nothing), read every `interval`; a comment every 15 s keeps proxies
    /// from closing an idle stream. Ends when the browser goes away.
    func live(_ request: Request) -> Response {
        let target = request.uri.queryParameters.get("page").map { String($0) } ?? "/"
        guard target.hasPrefix("/"), !target.hasPrefix("//"), !target.hasPrefix("/live") else {
            return Self.html("<p>Bad page.</p>", status: .badRequest)
        }
        var pageContext = context(request)
        pageContext.target = target
        pageContext.notice = nil
        let frozen = pageContext
        let seen = request.uri.queryParameters.get("seen").map { String($0) }
        let body = ResponseBody { writer in
            var last = seen
            var quietSince = ContinuousClock.now
            while !Task.isCancelled {
                let html = await self.livePart(target: target, context: frozen).html
                let digest = html.digest
                if digest != last {
                    try await writer.write(ByteBuffer(string: Self.event("update", html.markup)))
                    last = digest
                    quietSince = .now
                } else if ContinuousClock.now - quietSince > .seconds(15) {
                    try await writer.write(ByteBuffer(string: ": still here\n\n"))
                    quietSince = .now
                }
                try await Task.sleep(for: self.daemon.interval)
            }
            try await writer.finish(nil)
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream; charset=utf-8"
        headers[.cacheControl] = "no-store"
        // nginx: pass each event on at once instead of buffering the stream.
        headers[HTTPField.Name("X-Accel-Buffering")!] = "no"
        return Response(status: .ok, headers: headers, body: body)
    }

    /// One server-sent event; each line of `data` gets its own `data:` field.
    static func event(_ name: String, _ data: String) -> String {
        var out = "event: \(name)\n"
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) { out += "data: \(line)\n" }
        return out + "\n"
    }

    // MARK: Logging in and acting

    func loginForm(_ request: Request, message: String?, status: HTTPResponse.Status = .ok) -> Response {
        let context = context(request)
        guard operators.actionsEnabled else {
            let page = Layout.page(title: "Read-only", context: context, heading: "Read-only", live: nil,
                                   static: "<p>This dashboard has no operator password: it only shows. Give <code>loopd-web</code> a <code>--password-file</code> (or the credential <code>password</code>) to allow actions.</p>")
            return Self.html(page, status: .notFound)
        }
        let token = Operators.token()
        let returnTo = Self.safeReturn(request.uri.queryParameters.get("return").map { String($0) }) ?? "/"
        var response = Self.html(LoginPage.page(context: context, loginToken: token, returnTo: returnTo, message: message), status: status)
        response.setCookie(Cookie(name: Self.loginCookie, value: token, maxAge: 600, path: "/login",
                                  secure: secureCookies, httpOnly: true, sameSite: .strict))
        return response
    }

    func login(_ request: Request) async throws -> Response {
        let form = try await Self.form(request)
        guard let expected = request.cookies[Self.loginCookie]?.value, let given = form.csrf,
              Operators.constantTimeEqual(Array(expected.utf8), Array(given.utf8)) else {
            return loginForm(request, message: "The login form was stale or came from another page: try again.", status: .forbidden)
        }
        switch operators.login(password: form.password ?? "") {
        case .session(let id, _):
            var response = Response.redirect(to: Self.safeReturn(form.returnTo) ?? "/", type: .found)
            response.status = .seeOther
            response.setCookie(Cookie(name: Self.sessionCookie, value: id, maxAge: Int(Operators.sessionLifetime), path: "/",
                                      secure: secureCookies, httpOnly: true, sameSite: .strict))
            return response
        case .wrongPassword:
            try await Task.sleep(for: .milliseconds(500))
            return loginForm(request, message: "Wrong password.", status: .unauthorized)
        case .lockedOut:
            return loginForm(request, message: "Too many wrong passwords: wait a minute.", status: .tooManyRequests)
        case .readOnly:
            return loginForm(request, message: nil, status: .notFound)
        }
    }

    enum ActionResult {
        case redirect(String)
        case done(String, String)
    }

    /// Runs a state-changing request: refused without an operator's
    /// session and its CSRF token (or from another origin), else `body`'s
    /// outcome as a redirect back with a notice. A refusal of loopd's is
    /// the notice.
    func act(_ request: Request, _ body: (Form) async throws -> ActionResult) async throws -> Response {
        let form = try await Self.form(request)
        if let origin = request.headers[.origin], !Self.sameOrigin(origin, host: request.head.authority) {
            return Self.refusal("This request came from another site (\(origin)).")
        }
        let sessionID = request.cookies[Self.sessionCookie]?.value
        guard operators.session(sessionID) != nil else {
            return Self.refusal(operators.actionsEnabled ? "Log in to do this." : "This dashboard is read-only.")
        }
        guard operators.authorizes(session: sessionID, csrf: form.csrf) else {
            return Self.refusal("The form's token is missing or stale: reload the page and try again.")
        }
        let result: ActionResult
        do {
            result = try await body(form)
        } catch let error as LoopdError {
            result = .done(Self.safeReturn(form.returnTo) ?? "/", "loopd refused: \(error.message)")
        }
        switch result {
        case .redirect(let to):
            return Self.seeOther(to)
        case .done(let to, let notice):
            let back = Self.safeReturn(to) ?? "/"
            return Self.seeOther(back + (back.contains("?") ? "&" : "?") + "notice=" + percentEncoded(notice))
        }
    }

    struct Form: Decodable {
        var csrf: String?
        var password: String?
        var mode: String?
        var returnTo: String?

        enum CodingKeys: String, CodingKey {
            case csrf, password, mode
            case returnTo = "return"
        }
    }

    static func form(_ request: Request) async throws -> Form {
        let buffer = try await request.body.collect(upTo: maxFormBytes)
        let text = String(buffer: buffer).replacingOccurrences(of: "+", with: " ")
        return (try? URLEncodedFormDecoder().decode(Form.self, from: text)) ?? Form()
    }

    /// A local path to go back to; nil for anything else (another site, a scheme).
    static func safeReturn(_ s: String?) -> String? {
        guard let s, s.hasPrefix("/"), !s.hasPrefix("//"), !s.contains("\\"),
              !s.unicodeScalars.contains(where: { $0.value < 0x20 }) else { return nil }
        return s
    }

    static func sameOrigin(_ origin: String, host: String?) -> Bool {
        guard let host else { return false }
        return origin == "http://\(host)" || origin == "https://\(host)"
    }

    /// The name of `uid` on this host (loopd and the dashboard share one), if it has one.
    static func userName(_ uid: Int64) -> String? {
        guard let id = UInt32(exactly: uid), case .success(let account) = UserDatabase.account(ofUID: id) else { return nil }
        return account.name
    }

    // MARK: Responses

    static func html(_ page: HTML, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page.markup)))
    }

    static func refusal(_ message: String) -> Response {
        let context = PageContext(target: "/", csrf: nil, actionsEnabled: false, notice: nil)
        let page = Layout.page(title: "Refused", context: context, heading: "Refused", live: nil,
                               static: "<p class=\"error\" role=\"alert\">\(message)</p><p><a href=\"/\">Back to the overview</a></p>")
        return html(page, status: .forbidden)
    }

    static func seeOther(_ location: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = location
        return Response(status: .seeOther, headers: headers)
    }

    static func asset(_ text: String, type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "max-age=3600"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// The headers every response carries: this origin only, no framing, no
/// sniffing, no referrer to other sites.
struct SecurityHeaders: RouterMiddleware {
    typealias Context = BasicRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.contentSecurityPolicy] =
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        response.headers[.xContentTypeOptions] = "nosniff"
        // Same-origin only: with no-referrer a browser sends `Origin: null` on
        // the pages' own form posts, which the origin check must refuse.
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        return response
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import Testing
@testable import LoopdWeb

/// The dashboard's routes as a browser meets them, against a loopd that is
/// not there: what is refused is refused before loopd is asked anything.
/// (Tests/web/browser.py drives the real pages against a real loopd.)
struct DashboardTests {
    static func client(password: String?) -> RouterClient {
        let daemon = DaemonView(socketPath: "/nonexistent/loopd.sock", serverUID: .any, interval: .seconds(1))
        let dashboard = Dashboard(daemon: daemon, operators: Operators(password: password), secureCookies: false)
        return RouterClient(dashboard.router())
    }

    static func form(_ pairs: [(String, String)]) -> ByteBuffer {
        ByteBuffer(string: pairs.map { "\($0.0)=\(percentEncoded($0.1))" }.joined(separator: "&"))
    }

    static let formHeaders: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    /// The `name=value` of a Set-Cookie for `name`.
    static func cookie(_ r: RouterClient.Reply, _ name: String) -> String? {
        r.headers[values: .setCookie].first { $0.hasPrefix(name + "=") }.map { String($0.prefix { $0 != ";" }) }
    }

    /// Logs in as an operator: the session cookie and the CSRF token of its pages.
    static func logIn(_ client: RouterClient, password: String) async throws -> (cookie: String, csrf: String) {
        let form = try await client.execute(uri: "/login", method: .get)
        #expect(form.status == .ok)
        let loginCookie = try #require(cookie(form, Dashboard.loginCookie))
        let token = String(loginCookie.split(separator: "=")[1])
        var headers = formHeaders
        headers[.cookie] = loginCookie
        let done = try await client.execute(
            uri: "/login", method: .post, headers: headers,
            body: Self.form([("csrf", token), ("password", password), ("return", "/schedules")]))
        #expect(done.status == .seeOther)
        #expect(done.headers[.location] == "/schedules")
        let session = try #require(cookie(done, Dashboard.sessionCookie))
        #expect(done.headers[values: .setCookie].first { $0.hasPrefix(Dashboard.sessionCookie) }?.contains("HttpOnly") == true)
        #expect(done.headers[values: .setCookie].first { $0.hasPrefix(Dashboard.sessionCookie) }?.contains("SameSite=Strict") == true)
        // The pages of a logged-in operator carry the session's token in each form.
        var page = HTTPFields()
        page[.cookie] = session
        let login = try await client.execute(uri: "/login", method: .get, headers: page)
        let html = login.body
        let csrf = try #require(html.range(of: "action=\"/logout\" class=\"inline\"><input type=\"hidden\" name=\"csrf\" value=\"")
            .map { String(html[$0.upperBound...].prefix(64)) })
        return (session, csrf)
    }

    @Test func aReadOnlyDashboardOffersNoLoginAndRefusesActions() async throws {
        let client = Self.client(password: nil)
        let login = try await client.execute(uri: "/login", method: .get)
        #expect(login.status == .notFound)
        #expect(login.body.contains("only shows"))
        let cancel = try await client.execute(uri: "/jobs/abc/cancel", method: .post, headers: Self.formHeaders,
                                              body: Self.form([("csrf", "x")]))
        #expect(cancel.status == .forbidden)
        #expect(cancel.body.contains("read-only"))
    }

    /// Cancel, retry, mode and schedule changes need a session and its token.
    @Test func actionsNeedASessionAndItsCSRFToken() async throws {
        let client = Self.client(password: "pw")
        for uri in ["/jobs/abc/cancel", "/jobs/abc/retry", "/workers/w1/mode", "/schedules/s/pause", "/logout"] {
            let r = try await client.execute(uri: uri, method: .post, headers: Self.formHeaders, body: Self.form([]))
            #expect(r.status == .forbidden, "\(uri) without a login")
            #expect(r.body.contains("Log in to do this"))
        }
        let (session, csrf) = try await Self.logIn(client, password: "pw")
        var headers = Self.formHeaders
        headers[.cookie] = session
        for token in [nil, (csrf.hasPrefix("0") ? "1" : "0") + String(csrf.dropFirst())] {
            let fields = token.map { [("csrf", $0)] } ?? []
            let r = try await client.execute(uri: "/jobs/abc/cancel", method: .post, headers: headers, body: Self.form(fields))
            #expect(r.status == .forbidden)
            #expect(r.body.contains("token is missing or stale"))
        }
        // With both, the action reaches loopd; that it is not running
        // comes back as a notice on the page the form returns to.
        let r = try await client.execute(uri: "/jobs/abc/cancel", method: .post, headers: headers,
                                         body: Self.form([("csrf", csrf), ("return", "/jobs")]))
        #expect(r.status == .seeOther)
        #expect(r.headers[.location]?.hasPrefix("/jobs?notice=loopd%20refused") == true)
        // A form posted from another site is refused even with the cookie and token.
        var foreign = headers
        foreign[.origin] = "https://evil.example"
        let cross = try await client.execute(uri: "/jobs/abc/cancel", method: .post, headers: foreign,
                                             body: Self.form([("csrf", csrf)]))
        #expect(cross.status == .forbidden)
        // Logged out, the same cookie and token do nothing.
        let out = try await client.execute(uri: "/logout", method: .post, headers: headers, body: Self.form([("csrf", csrf)]))
        #expect(out.status == .seeOther)
        let after = try await client.execute(uri: "/jobs/abc/cancel", method: .post, headers: headers,
                                             body: Self.form([("csrf", csrf)]))
        #expect(after.status == .forbidden)
    }

    /// A login needs the token of the form it came from (no login CSRF) and the password.
    @Test func aLoginNeedsItsFormsTokenAndThePassword() async throws {
        let client = Self.client(password: "pw")
        let noCookie = try await client.execute(uri: "/login", method: .post, headers: Self.formHeaders,
                                                body: Self.form([("csrf", "abc"), ("password", "pw")]))
        #expect(noCookie.status == .forbidden)
        #expect(Self.cookie(noCookie, Dashboard.sessionCookie) == nil)
        let form = try await client.execute(uri: "/login", method: .get)
        let loginCookie = try #require(Self.cookie(form, Dashboard.loginCookie))
        var headers = Self.formHeaders
        headers[.cookie] = loginCookie
        let token = String(loginCookie.split(separator: "=")[1])
        let wrong = try await client.execute(uri: "/login", method: .post, headers: headers,
                                             body: Self.form([("csrf", token), ("password", "nope")]))
        #expect(wrong.status == .unauthorized)
        #expect(Self.cookie(wrong, Dashboard.sessionCookie) == nil)
        // A return address elsewhere is not followed.
        let elsewhere = try await client.execute(
            uri: "/login", method: .post, headers: headers,
            body: Self.form([("csrf", token), ("password", "pw"), ("return", "//evil.example/")]))
        #expect(elsewhere.status == .seeOther)
        #expect(elsewhere.headers[.location] == "/")
    }

    /// Without loopd the pages say so (503, an alert) rather than hang or
    /// show nothing; every response forbids other origins and framing.
    @Test func pagesReportAnAbsentDaemonAndCarrySecurityHeaders() async throws {
        let client = Self.client(password: nil)
        for uri in ["/", "/jobs", "/failed", "/schedules", "/jobs/abc"] {
            let r = try await client.execute(uri: uri, method: .get)
            #expect(r.status == .serviceUnavailable, "\(uri)")
            #expect(r.body.contains("role=\"alert\">loopd did not answer"))
            #expect(r.headers[.contentSecurityPolicy]?.contains("default-src 'self'") == true)
            #expect(r.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
        }
        let css = try await client.execute(uri: "/assets/app.css", method: .get)
        #expect(css.status == .ok && css.headers[.contentType] == "text/css; charset=utf-8")
        let bad = try await client.execute(uri: "/live?page=%2F%2Fevil.example", method: .get)
        #expect(bad.status == .badRequest)
    }

    @Test func serverSentEventsCarryEachLineOfTheirData() {
        #expect(Dashboard.event("update", "<p>a</p>\n<p>b</p>") == "event: update\ndata: <p>a</p>\ndata: <p>b</p>\n\n")
    }
}

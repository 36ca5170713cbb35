import Foundation
import Testing
@testable import LoopdWeb

/// Logging in, sessions and CSRF tokens.
struct OperatorTests {
    @Test func withoutAPasswordNoOneLogsIn() {
        let ops = Operators(password: nil)
        #expect(!ops.actionsEnabled)
        #expect(ops.login(password: "") == .readOnly)
        #expect(!ops.authorizes(session: "x", csrf: "y"))
    }

    @Test func aSessionAuthorizesOnlyWithItsOwnToken() throws {
        let ops = Operators(password: "hunter2")
        #expect(ops.login(password: "hunter") == .wrongPassword)
        guard case .session(let id, let session) = ops.login(password: "hunter2") else {
            Issue.record("the right password gives a session")
            return
        }
        #expect(id.count == 64 && session.csrf.count == 64 && id != session.csrf)
        #expect(ops.authorizes(session: id, csrf: session.csrf))
        #expect(!ops.authorizes(session: id, csrf: nil))
        let altered = String(session.csrf.dropLast()) + (session.csrf.hasSuffix("0") ? "1" : "0")
        #expect(!ops.authorizes(session: id, csrf: altered))
        #expect(!ops.authorizes(session: "not-a-session", csrf: session.csrf))
        ops.logout(id)
        #expect(!ops.authorizes(session: id, csrf: session.csrf))
    }

    @Test func sessionsExpire() {
        let ops = Operators(password: "p")
        let t0 = Date(timeIntervalSince1970: 1_000_000)
        guard case .session(let id, let session) = ops.login(password: "p", now: t0) else {
            Issue.record("no session")
            return
        }
        #expect(ops.authorizes(session: id, csrf: session.csrf, now: t0 + Operators.sessionLifetime - 1))
        #expect(!ops.authorizes(session: id, csrf: session.csrf, now: t0 + Operators.sessionLifetime))
    }

    /// Guessing is bounded: after `maxFailures` wrong passwords in a minute,
    /// even the right one is refused until the minute has passed.
    @Test func wrongPasswordsLockLoginsOutForAMinute() {
        let ops = Operators(password: "p")
        let t0 = Date(timeIntervalSince1970: 1_000_000)
        for _ in 0..<Operators.maxFailures { #expect(ops.login(password: "q", now: t0) == .wrongPassword) }
        #expect(ops.login(password: "p", now: t0 + 1) == .lockedOut)
        guard case .session = ops.login(password: "p", now: t0 + Operators.lockoutWindow + 1) else {
            Issue.record("the lockout ends")
            return
        }
    }

    @Test func comparisonsAreExact() {
        #expect(Operators.constantTimeEqual(Array("abc".utf8), Array("abc".utf8)))
        #expect(!Operators.constantTimeEqual(Array("abc".utf8), Array("abcd".utf8)))
        #expect(!Operators.constantTimeEqual(Array("".utf8), Array("a".utf8)))
        #expect(Operators.constantTimeEqual([], []))
    }

    @Test func aPasswordFileLosesOneNewlineAndMustNotBeEmpty() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("loopd-web-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("pw").path
        try Data("s3cret\n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(try Operators.readPassword(at: file) == "s3cret")
        try Data("\n".utf8).write(to: URL(fileURLWithPath: file))
        #expect(throws: WebError.self) { try Operators.readPassword(at: file) }
        #expect(throws: WebError.self) { try Operators.readPassword(at: dir.appendingPathComponent("none").path) }
    }
}

import Foundation
import Synchronization

/// Who may act. An operator is whoever knows the dashboard's password (read
/// from a file or a systemd credential when it starts); without one the
/// dashboard is read-only and offers no login.
///
/// A login gives a session: a random id in an HttpOnly, SameSite=Strict
/// cookie, and a random CSRF token the pages put in each form. A request
/// that changes anything must carry both; the token is compared in
/// constant time. Sessions live in memory: a restart logs everyone out.
public final class Operators: Sendable {
    /// How long a session lasts after its login.
    static let sessionLifetime: TimeInterval = 12 * 3600
    /// After this many wrong passwords in `lockoutWindow`, logins are refused
    /// until the window has passed.
    static let maxFailures = 10
    static let lockoutWindow: TimeInterval = 60

    struct Session: Sendable, Equatable {
        var csrf: String
        var expires: Date
    }

    private struct State {
        var sessions: [String: Session] = [:]
        var failures: [Date] = []
    }

    private let password: [UInt8]?
    private let state = Mutex(State())

    /// `password` nil: read-only.
    public init(password: String?) {
        self.password = password.map { Array($0.utf8) }
    }

    /// Whether anyone can log in (a password was given).
    public var actionsEnabled: Bool { password != nil }

    enum LoginResult: Equatable {
        case session(id: String, Session)
        case wrongPassword
        case lockedOut
        case readOnly
    }

    func login(password attempt: String, now: Date = Date()) -> LoginResult {
        guard let password else { return .readOnly }
        return state.withLock { s in
            s.failures.removeAll { now.timeIntervalSince($0) > Self.lockoutWindow }
            if s.failures.count >= Self.maxFailures { return .lockedOut }
            guard Self.constantTimeEqual(Array(attempt.utf8), password) else {
                s.failures.append(now)
                return .wrongPassword
            }
            s.sessions = s.sessions.filter { $0.value.expires > now }
            let id = Self.token()
            let session = Session(csrf: Self.token(), expires: now.addingTimeInterval(Self.sessionLifetime))
            s.sessions[id] = session
            return .session(id: id, session)
        }
    }

    /// The live session with this id.
    func session(_ id: String?, now: Date = Date()) -> Session? {
        guard let id, actionsEnabled else { return nil }
        return state.withLock { s in
            guard let session = s.sessions[id] else { return nil }
            if session.expires <= now {
                s.sessions[id] = nil
                return nil
            }
            return session
        }
    }

    /// Whether `csrf` is the token of the live session `id`.
    func authorizes(session id: String?, csrf: String?, now: Date = Date()) -> Bool {
        guard let session = session(id, now: now), let csrf else { return false }
        return Self.constantTimeEqual(Array(csrf.utf8), Array(session.csrf.utf8))
    }

    func logout(_ id: String?) {
        guard let id else { return }
        _ = state.withLock { $0.sessions.removeValue(forKey: id) }
    }

    /// 32 random bytes (getrandom), as 64 hex digits.
    static func token() -> String {
        var rng = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for _ in 0..<32 {
            let b = UInt8.random(in: 0...255, using: &rng)
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Equal bytes, in a time that depends on the lengths only.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var diff = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            diff |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return diff == 0
    }

    /// The password in `path`, without one trailing newline. A missing or
    /// unreadable file, or an empty password, throws: an operator who
    /// asked for logins should not silently get none.
    public static func readPassword(at path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw WebError.config("cannot read the password file \(path)")
        }
        var text = String(decoding: data, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        guard !text.isEmpty else { throw WebError.config("the password file \(path) is empty") }
        return text
    }
}

/// A start-up error, printed as it is.
public enum WebError: Error, CustomStringConvertible {
    case config(String)

    public var description: String {
        switch self {
        case .config(let message): message
        }
    }
}

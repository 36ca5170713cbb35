import CPostgres
import Glibc
import LoopPlatform
import LoopRuntime

/// One connection to PostgreSQL, driven by the loop it was made on: libpq's
/// non-blocking API, its socket a descriptor source, so the loop never
/// blocks on the database. Statements queue and run one at a time, in the
/// order given; each one's completion runs on the loop. A lost connection
/// fails what was queued with `.unavailable` and is made again after a
/// backoff (0.1 s doubling to 10 s, with jitter), after which
/// `onConnected` runs again (to LISTEN, register, ...). Main thread only.
///
/// SPI for the benchmarks, which measure it beside other PostgreSQL clients.
@_spi(Benchmarks) public final class PostgresConnection: @unchecked Sendable {
    public typealias Completion = (Result<PostgresRows, PostgresError>) -> Void

    /// Where it is in its life.
    public enum State: Equatable, Sendable {
        /// Waiting for the backoff timer before the next attempt (or not started).
        case waiting
        /// libpq is connecting (TCP, TLS, authentication).
        case connecting
        /// Connected; statements run.
        case ready
        /// `close()` was called.
        case closed
    }

    public private(set) var state = State.waiting
    /// Why the last attempt or connection failed; nil while connected.
    public private(set) var lastError: String?

    private let loop: Loop
    private let keywords: [String]
    private let values: [String]
    private var conn: OpaquePointer?
    private var source: LoopFileDescriptorSource?
    private var retryTimer: LoopTimer?
    /// Bounds an attempt: libpq's `connect_timeout` is not enforced in non-blocking use.
    private var attemptTimer: LoopTimer?
    /// Bounds the wait for the current statement's result (`replyTimeout`).
    private var replyTimer: LoopTimer?
    /// A statement whose result has not come after this breaks the
    /// connection: a server (or a network) that stopped answering without
    /// closing anything must not hold every later statement. nil: no bound.
    public var replyTimeout: Duration?
    private var backoff = PostgresConnection.firstBackoff
    private var queue: [Statement] = []
    /// The statement whose results are being read; nil when idle.
    private var current: Statement?
    /// The results read so far for `current` (a simple query may have several).
    private var currentRows: PostgresRows?
    private var currentError: PostgresError?

    /// Runs each time a connection is made, before queued statements.
    public var onConnected: ((PostgresConnection) -> Void)?
    /// Runs when a connection attempt fails or a connection is lost (why).
    public var onLost: ((String) -> Void)?
    /// Runs for each NOTIFY on a channel this connection LISTENs to (channel, payload).
    public var onNotification: ((String, String) -> Void)?
    /// Runs with each statement's round trip, from sending to its last result.
    var onRoundTrip: ((Duration) -> Void)?
    /// Runs with each notice or warning the server sends (libpq would print them on stderr).
    var onNotice: ((String) -> Void)?

    static let firstBackoff = Duration.milliseconds(100)
    static let maxBackoff = Duration.seconds(10)
    /// How long one attempt (TCP, TLS, authentication) may take.
    static let connectTimeout = Duration.seconds(10)

    private struct Statement {
        let sql: String
        let parameters: [String?]
        /// Several statements in one string, without parameters (the simple protocol).
        let simple: Bool
        /// Held to `replyTimeout` (not a lock wait, which may last).
        let bounded: Bool
        let completion: Completion
        var sentAt = ContinuousClock.now
    }

    /// `parameters`: libpq's connection keywords and values, in order (later ones override earlier, and a
    /// `dbname` holding a conninfo string or URL is expanded).
    public init(loop: Loop, parameters: [(String, String)]) {
        self.loop = loop
        keywords = parameters.map(\.0)
        values = parameters.map(\.1)
    }

    /// Starts connecting (again, if `close()` was not called).
    public func start() {
        guard state == .waiting, conn == nil else { return }
        retryTimer?.invalidate()
        retryTimer = nil
        connect()
    }

    /// Runs `sql` with `$1`… bound to `parameters` (text; nil is NULL).
    /// Fails at once with `.unavailable` when not connected: callers decide
    /// whether to wait for `onConnected`. `bounded: false` exempts it from
    /// `replyTimeout` (a lock it may wait for).
    public func query(_ sql: String, _ parameters: [String?] = [], bounded: Bool = true,
                      _ completion: @escaping Completion) {
        enqueue(Statement(sql: sql, parameters: parameters, simple: false, bounded: bounded, completion: completion))
    }

    /// Runs several `;`-separated statements without parameters (DDL,
    /// `BEGIN; …; COMMIT`); the rows are the last statement's.
    public func script(_ sql: String, _ completion: @escaping Completion) {
        enqueue(Statement(sql: sql, parameters: [], simple: true, bounded: true, completion: completion))
    }

    /// Closes the connection; queued statements fail with `.unavailable`.
    public func close() {
        state = .closed
        retryTimer?.invalidate()
        retryTimer = nil
        drop(reason: "closed")
    }

    deinit {
        source?.invalidate()
        if let conn { lpq_PQfinish(conn) }
    }

    private func enqueue(_ statement: Statement) {
        guard state == .ready else {
            statement.completion(.failure(.unavailable(lastError ?? "not connected")))
            return
        }
        queue.append(statement)
        if current == nil { sendNext() }
    }

    // MARK: Connecting

    private func connect() {
        state = .connecting
        if let failure = lpq_load() { return lost(String(cString: failure)) }
        let timer = LoopTimer(after: PostgresConnection.connectTimeout) { [unowned self] _ in
            attemptTimer = nil
            if state == .connecting { lost("no connection within \(PostgresConnection.connectTimeout)") }
        }
        attemptTimer = timer
        loop.add(timer, forMode: .common)
        let made: OpaquePointer? = withCStrings(keywords) { k in
            withCStrings(values) { v in lpq_PQconnectStartParams(k, v, 1) }
        }
        guard let made else {
            lost("libpq could not allocate a connection")
            return
        }
        conn = made
        _ = lpq_PQsetNoticeProcessor(made, { context, message in
            guard let context, let message else { return }
            let connection = Unmanaged<PostgresConnection>.fromOpaque(context).takeUnretainedValue()
            connection.onNotice?(PostgresError.trimmed(String(cString: message)))
        }, Unmanaged.passUnretained(self).toOpaque())
        if lpq_PQstatus(made) == CONNECTION_BAD {
            lost(errorText(made))
            return
        }
        // libpq starts wanting to write: the TCP connect must complete.
        continueConnecting(PGRES_POLLING_WRITING)
    }

    private func continueConnecting(_ status: PostgresPollingStatusType) {
        guard let conn else { return }
        switch status {
        case PGRES_POLLING_OK:
            connected()
        case PGRES_POLLING_READING:
            watch(.readable)
        case PGRES_POLLING_WRITING:
            watch(.writable)
        default:
            lost(errorText(conn))
        }
    }

    private func connected() {
        guard let conn else { return }
        if lpq_PQsetnonblocking(conn, 1) != 0 {
            lost(errorText(conn))
            return
        }
        attemptTimer?.invalidate()
        attemptTimer = nil
        state = .ready
        lastError = nil
        backoff = PostgresConnection.firstBackoff
        watch(.readable)
        onConnected?(self)
        if current == nil { sendNext() }
    }

    /// Watches the connection's socket for `interest`. libpq may move to
    /// another socket while connecting (the next host of a list), so the
    /// source follows `PQsocket`.
    private func watch(_ interest: IOInterest) {
        guard let conn else { return }
        let fd = lpq_PQsocket(conn)
        guard fd >= 0 else {
            lost(errorText(conn))
            return
        }
        if let source, source.fileDescriptor == fd {
            source.interest = interest
            return
        }
        source?.invalidate()
        let s = LoopFileDescriptorSource(fileDescriptor: fd, interest: interest) { [unowned self] readiness in
            ready(readiness)
        }
        source = s
        loop.add(s, forMode: .common)
    }

    private func ready(_ readiness: LoopFileDescriptorSource.Readiness) {
        guard let conn else { return }
        switch state {
        case .connecting:
            continueConnecting(lpq_PQconnectPoll(conn))
        case .ready:
            if readiness.writable { flush() }
            if readiness.readable || readiness.hangup { readInput() }
        case .waiting, .closed:
            return
        }
    }

    // MARK: Statements

    private func sendNext() {
        guard state == .ready, current == nil, !queue.isEmpty, let conn else { return }
        var statement = queue.removeFirst()
        statement.sentAt = .now
        let sent: Int32
        if statement.simple {
            sent = lpq_PQsendQuery(conn, statement.sql)
        } else {
            sent = withOptionalCStrings(statement.parameters) { values in
                lpq_PQsendQueryParams(conn, statement.sql, Int32(statement.parameters.count), nil, values, nil, nil, 0)
            }
        }
        guard sent == 1 else {
            // The statement was not sent: only it fails, unless the connection is gone.
            let why = errorText(conn)
            statement.completion(.failure(.unavailable(why)))
            if lpq_PQstatus(conn) == CONNECTION_BAD { lost(why) } else { sendNext() }
            return
        }
        current = statement
        currentRows = nil
        currentError = nil
        if statement.bounded, let replyTimeout {
            let t = LoopTimer(after: replyTimeout) { [unowned self] _ in
                replyTimer = nil
                if current != nil { lost("no reply from the server within \(replyTimeout)") }
            }
            replyTimer = t
            loop.add(t, forMode: .common)
        }
        flush()
    }

    /// Sends what libpq buffered; waits for writability while it cannot.
    private func flush() {
        guard let conn else { return }
        switch lpq_PQflush(conn) {
        case 0: source?.interest = .readable
        case 1: source?.interest = [.readable, .writable]
        default: lost(errorText(conn))
        }
    }

    private func readInput() {
        guard let conn else { return }
        guard lpq_PQconsumeInput(conn) == 1 else {
            lost(errorText(conn))
            return
        }
        // A completion may close the connection: `self.conn` is checked each time round.
        while self.conn == conn, current != nil, lpq_PQisBusy(conn) == 0 {
            guard let result = lpq_PQgetResult(conn) else {
                finishCurrent()
                continue
            }
            take(result)
            lpq_PQclear(result)
        }
        guard self.conn == conn else { return }
        deliverNotifications(conn)
        if self.conn == conn, lpq_PQstatus(conn) == CONNECTION_BAD { lost(errorText(conn)) }
    }

    /// One result of the current statement: rows, a command's count, or an error.
    private func take(_ result: OpaquePointer) {
        switch lpq_PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            currentRows = PostgresRows(result)
        default:
            if currentError == nil { currentError = PostgresError(result) }
        }
    }

    private func finishCurrent() {
        guard let statement = current else { return }
        current = nil
        replyTimer?.invalidate()
        replyTimer = nil
        onRoundTrip?(ContinuousClock.now - statement.sentAt)
        if let currentError {
            statement.completion(.failure(currentError))
        } else {
            statement.completion(.success(currentRows ?? PostgresRows()))
        }
        currentRows = nil
        currentError = nil
        sendNext()
    }

    private func deliverNotifications(_ conn: OpaquePointer) {
        while self.conn == conn, let notice = lpq_PQnotifies(conn) {
            let channel = String(cString: notice.pointee.relname)
            let payload = String(cString: notice.pointee.extra)
            lpq_PQfreemem(notice)
            onNotification?(channel, payload)
        }
    }

    // MARK: Losing it

    /// The connection failed or broke: fail what waits, schedule the next attempt.
    private func lost(_ why: String) {
        let wasClosed = state == .closed
        if !wasClosed {
            // Before the failed statements' completions run: what they send again fails at once.
            state = .waiting
            lastError = why
        }
        drop(reason: why)
        guard !wasClosed else { return }
        onLost?(why)
        let delay = jittered(backoff)
        backoff = min(backoff * 2, PostgresConnection.maxBackoff)
        let t = LoopTimer(after: delay) { [unowned self] _ in
            retryTimer = nil
            if state == .waiting { connect() }
        }
        retryTimer = t
        loop.add(t, forMode: .common)
    }

    private func drop(reason: String) {
        attemptTimer?.invalidate()
        attemptTimer = nil
        replyTimer?.invalidate()
        replyTimer = nil
        source?.invalidate()
        source = nil
        if let conn { lpq_PQfinish(conn) }
        conn = nil
        var failing = queue
        queue = []
        if let current { failing.insert(current, at: 0) }
        current = nil
        currentRows = nil
        currentError = nil
        for statement in failing { statement.completion(.failure(.unavailable(reason))) }
    }

    /// Between 80% and 120% of `delay`, so nodes that lost the database together do not return together.
    private func jittered(_ delay: Duration) -> Duration {
        delay * Double.random(in: 0.8...1.2)
    }

    private func errorText(_ conn: OpaquePointer) -> String {
        PostgresError.trimmed(lpq_PQerrorMessage(conn).map { String(cString: $0) } ?? "unknown libpq error")
    }
}

/// What a statement returned: its column names and its rows as text (nil
/// for NULL), copied out of libpq's result.
@_spi(Benchmarks) public struct PostgresRows: Sendable {
    public var columns: [String] = []
    public var rows: [[String?]] = []
    /// The number of rows an INSERT, UPDATE or DELETE touched.
    public var affected = 0

    init() {}

    init(_ result: OpaquePointer) {
        let fields = Int32(lpq_PQnfields(result))
        columns = (0..<fields).map { String(cString: lpq_PQfname(result, $0)) }
        let count = lpq_PQntuples(result)
        rows.reserveCapacity(Int(count))
        for row in 0..<count {
            rows.append((0..<fields).map { field in
                lpq_PQgetisnull(result, row, field) == 1 ? nil : String(cString: lpq_PQgetvalue(result, row, field))
            })
        }
        affected = Int(String(cString: lpq_PQcmdTuples(result))) ?? 0
    }

    /// The value of `column` in row `row`; nil for NULL, and for a row or column the result does not have.
    public func value(_ row: Int, _ column: String) -> String? {
        guard rows.indices.contains(row), let index = columns.firstIndex(of: column) else { return nil }
        return rows[row][index]
    }

    /// `value(row, column)` as an integer; nil for NULL, a missing row or column, or text that is not one.
    public func integer(_ row: Int, _ column: String) -> Int64? {
        value(row, column).flatMap { Int64($0) }
    }
}

/// Why a statement failed.
@_spi(Benchmarks) public enum PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No connection, or it broke before the statement's result came.
    case unavailable(String)
    /// The server refused the statement: its SQLSTATE and message.
    case server(sqlState: String, message: String)

    init(_ result: OpaquePointer) {
        let state = lpq_PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? ""
        let message = lpq_PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
            ?? PostgresError.trimmed(String(cString: lpq_PQresultErrorMessage(result)))
        self = .server(sqlState: state, message: message)
    }

    public var description: String {
        switch self {
        case .unavailable(let why): "database unavailable: \(why)"
        case .server(let state, let message): "\(message) (SQLSTATE \(state))"
        }
    }

    /// libpq's messages end with a newline, and some span lines.
    static func trimmed(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingWhitespace() }.joined(separator: "; ")
    }
}

/// Calls `body` with a NULL-terminated array of C strings for `strings`.
private func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    withOptionalCStrings(strings.map { Optional($0) }, body)
}

/// `withCStrings` where nil elements stay NULL pointers (SQL NULL parameters).
private func withOptionalCStrings<R>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { $0.map { strdup($0) } ?? nil }
    defer { for copy in copies { free(copy) } }
    var pointers = copies.map { UnsafePointer($0) }
    pointers.append(nil)
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

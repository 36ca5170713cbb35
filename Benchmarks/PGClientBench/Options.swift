import LoopPlatform

/// How the benchmark reaches the server: the same server, by the same path, for both clients.
enum Transport: String, Sendable {
    case unix, tcp
}

/// The command line. `--database` is a libpq conninfo string, given to
/// LoopdCore's connection as it is; postgres-nio gets the equivalent
/// configuration, built from the same string (or from `--socket-path`,
/// `--host`, `--port`).
struct Options: Sendable {
    var conninfo = ""
    var transport = Transport.unix
    var socketPath: String?
    var host: String?
    var port: Int?
    var count = 20_000
    var warmup = 2_000
    var rounds = 5
    var depth = 64
    var timeoutSeconds = 600
    var clients = ["libpq", "postgres-nio"]

    static let usage = """
        usage: PGClientBench --database CONNINFO (--unix | --tcp) [options]

        LoopdCore's PostgresConnection (libpq's non-blocking API on a LoopRuntime
        loop) beside postgres-nio (its own event-loop thread, each result hopped
        to the loop with loop.perform), alternated round by round in one process.

          --database CONNINFO  libpq conninfo: host= (a socket directory for --unix,
                               an address for --tcp), port=, dbname=, user=, password=
          --unix | --tcp       which one the conninfo names (checked against host=)
          --socket-path PATH   postgres-nio's socket (default HOST/.s.PGSQL.PORT)
          --host H --port P    postgres-nio's TCP peer (default the conninfo's)
          --count N            measured round trips per run (default 20000)
          --warmup N           unmeasured round trips before them (default 2000)
          --rounds N           runs of each client per statement (default 5)
          --depth N            statements queued at once in (c) (default 64; 0 or 1 skips (c))
          --timeout S          give up on a run after S seconds (default 600)
          --only CLIENT        run one client alone, libpq or postgres-nio (to profile it)
        """

    struct Failure: Error {
        let message: String
    }

    static func parse(_ arguments: [String]) throws(Failure) -> Options {
        var o = Options()
        var transportGiven = false
        var rest = arguments[...]
        func value(_ flag: String) throws(Failure) -> String {
            guard let v = rest.popFirst() else { throw Failure(message: "\(flag) needs a value\n\n\(usage)") }
            return v
        }
        func number(_ flag: String, minimum: Int = 1) throws(Failure) -> Int {
            let text = try value(flag)
            guard let n = Int(text), n >= minimum else { throw Failure(message: "\(flag): not a number ≥ \(minimum): \(text)") }
            return n
        }
        while let flag = rest.popFirst() {
            switch flag {
            case "--database": o.conninfo = try value(flag)
            case "--unix": o.transport = .unix; transportGiven = true
            case "--tcp": o.transport = .tcp; transportGiven = true
            case "--socket-path": o.socketPath = try value(flag)
            case "--host": o.host = try value(flag)
            case "--port": o.port = try number(flag)
            case "--count": o.count = try number(flag)
            case "--warmup": o.warmup = try number(flag, minimum: 0)
            case "--rounds": o.rounds = try number(flag)
            case "--depth": o.depth = try number(flag, minimum: 0)
            case "--timeout": o.timeoutSeconds = try number(flag)
            case "--only":
                let name = try value(flag)
                guard o.clients.contains(name) else { throw Failure(message: "--only: libpq or postgres-nio, not \(name)") }
                o.clients = [name]
            case "-h", "--help": throw Failure(message: usage)
            default: throw Failure(message: "unknown argument \(flag)\n\n\(usage)")
            }
        }
        guard !o.conninfo.isEmpty, transportGiven else { throw Failure(message: usage) }
        return o
    }
}

/// What postgres-nio needs, taken from the conninfo string and the options.
struct NIOTarget: Sendable {
    enum Peer: Sendable {
        case socket(path: String)
        case tcp(host: String, port: Int)
    }

    var peer: Peer
    var user: String
    var password: String?
    var database: String?

    init(_ options: Options) throws(Options.Failure) {
        let fields = try parseConninfo(options.conninfo)
        for (key, value) in fields where key == "sslmode" && !["disable", "allow", "prefer"].contains(value) {
            throw Options.Failure(message: "sslmode=\(value): this benchmark measures both clients without TLS")
        }
        let host = fields["hostaddr"] ?? fields["host"] ?? ""
        let port = Int(fields["port"] ?? "5432") ?? 5432
        switch options.transport {
        case .unix:
            if let path = options.socketPath {
                peer = .socket(path: path)
            } else {
                guard host.hasPrefix("/") else {
                    throw Options.Failure(message: "--unix: the conninfo's host= is not a socket directory (\(host))")
                }
                peer = .socket(path: "\(host)/.s.PGSQL.\(port)")
            }
        case .tcp:
            let peerHost = options.host ?? host
            guard !peerHost.isEmpty, !peerHost.hasPrefix("/") else {
                throw Options.Failure(message: "--tcp: the conninfo's host= is not an address (\(host))")
            }
            peer = .tcp(host: peerHost, port: options.port ?? port)
        }
        // libpq's defaults: the OS user's name, and a database named after the user.
        user = fields["user"] ?? (try? UserDatabase.account(ofUID: currentUID()).get())?.name ?? "postgres"
        password = fields["password"]
        database = fields["dbname"] ?? user
    }

    var description: String {
        switch peer {
        case .socket(let path): "unix socket \(path)"
        case .tcp(let host, let port): "TCP \(host):\(port)"
        }
    }
}

/// A libpq conninfo string's `keyword = value` pairs (values bare, or in
/// single quotes, with `\` escaping the next character in either).
func parseConninfo(_ text: String) throws(Options.Failure) -> [String: String] {
    if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
        throw Options.Failure(message: "give --database as keyword=value pairs, not a URL")
    }
    var fields: [String: String] = [:]
    var chars = Array(text)[...]
    func skipSpaces() { while let c = chars.first, c.isWhitespace { chars.removeFirst() } }
    while true {
        skipSpaces()
        guard !chars.isEmpty else { break }
        var key = ""
        while let c = chars.first, c != "=", !c.isWhitespace { key.append(c); chars.removeFirst() }
        skipSpaces()
        guard chars.popFirst() == "=" else { throw Options.Failure(message: "conninfo: missing = after \(key)") }
        skipSpaces()
        var value = ""
        if chars.first == "'" {
            chars.removeFirst()
            while true {
                guard let c = chars.popFirst() else { throw Options.Failure(message: "conninfo: unterminated quote") }
                if c == "'" { break }
                if c == "\\", let next = chars.popFirst() { value.append(next) } else { value.append(c) }
            }
        } else {
            while let c = chars.first, !c.isWhitespace {
                chars.removeFirst()
                if c == "\\", let next = chars.popFirst() { value.append(next) } else { value.append(c) }
            }
        }
        fields[key] = value
    }
    return fields
}

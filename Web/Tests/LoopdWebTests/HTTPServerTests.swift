import Dispatch
import Foundation
import Hummingbird
import Logging
import Testing
@testable import LoopdWeb
#if canImport(Glibc)
import Glibc
#endif

/// The server on each kind of address, socket activation's included: a
/// listening socket made beforehand, as systemd makes it, is served.
struct HTTPServerTests {
    static func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/hello") { _, _ in "hello" }
        return router
    }

    /// A GET over a new TCP connection to 127.0.0.1:`port`; the whole response.
    static func get(port: UInt16, path: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(rc == 0)
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        _ = request.withCString { write(fd, $0, strlen($0)) }
        var out = [UInt8]()
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buf, buf.count)
            if n <= 0 { break }
            out += buf[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A socket bound to a free loopback port and listening, as a socket unit leaves it.
    static func listeningSocket() -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        listen(fd, 16)
        var bound = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        return (fd, UInt16(bigEndian: bound.sin_port))
    }

    /// `get` on a thread of its own: a blocking read on one of the few
    /// threads that run tasks would starve the server under test.
    static func fetch(port: UInt16, path: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try get(port: port, path: path) }) }
        }
    }

    static func serve(_ address: ListenAddress, _ body: @Sendable (String) async throws -> Void) async throws {
        let server = HTTPServer(address: address, router: router(), logger: Logger(label: "test"))
        let (bound, continuation) = AsyncStream.makeStream(of: String.self)
        try await withThrowingTaskGroup { group in
            group.addTask { try await server.run { continuation.yield($0) } }
            var it = bound.makeAsyncIterator()
            let address = try #require(await it.next())
            try await body(address)
            group.cancelAll()
        }
    }

    @Test func anInheritedListeningSocketIsServed() async throws {
        let (fd, port) = Self.listeningSocket()
        try await Self.serve(.inherited(fd)) { bound in
            #expect(bound == "127.0.0.1:\(port)")
            let response = try await Self.fetch(port: port, path: "/hello")
            #expect(response.hasPrefix("HTTP/1.1 200 OK"))
            #expect(response.hasSuffix("hello"))
        }
    }

    @Test func aTCPAddressIsBoundAndServed() async throws {
        try await Self.serve(.tcp(host: "127.0.0.1", port: 0)) { bound in
            let port = try #require(UInt16(bound.split(separator: ":").last ?? ""))
            #expect(port != 0)
            let response = try await Self.fetch(port: port, path: "/missing")
            #expect(response.hasPrefix("HTTP/1.1 404"))
        }
    }
}

import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded

/// Hands requests straight to a router's responder, as the server would
/// after reading them, and collects each whole response.
///
/// HummingbirdTesting's router mode does the same, but its product links an
/// HTTP client with TLS and HTTP/2 (async-http-client over swift-nio-ssl,
/// BoringSSL and swift-crypto) that these tests never use: building it took
/// most of the package's test build.
struct RouterClient {
    let responder: RouterResponder<BasicRequestContext>
    let logger = Logger(label: "loopd-web-test")

    init(_ router: Router<BasicRequestContext>) {
        responder = router.buildResponder()
    }

    /// A response as the browser gets it.
    struct Reply {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: String
    }

    func execute(uri: String, method: HTTPRequest.Method, headers: HTTPFields = [:], body: ByteBuffer? = nil) async throws -> Reply {
        var headers = headers
        if let body { headers[.contentLength] = String(body.readableBytes) }
        let head = HTTPRequest(method: method, scheme: "http", authority: "localhost", path: uri, headerFields: headers)
        let request = Request(head: head, body: RequestBody(buffer: body ?? ByteBuffer()))
        let context = BasicRequestContext(source: ApplicationRequestContextSource(channel: NIOAsyncTestingChannel(), logger: logger))
        let response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch {
            // What the server answers for an error no route turned into a response.
            response = Response(status: .internalServerError)
        }
        let collected = CollectedBody()
        try await response.body.write(collected)
        return Reply(status: response.status, headers: response.headers, body: String(buffer: collected.buffer))
    }
}

/// A response body's bytes, as they are written.
private final class CollectedBody: ResponseBodyWriter {
    var buffer = ByteBuffer()

    func write(_ part: ByteBuffer) async throws {
        buffer.writeImmutableBuffer(part)
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}

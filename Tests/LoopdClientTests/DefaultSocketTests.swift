import Glibc
import LoopdClient
import Testing

/// The default socket: `$LOOPD_SOCKET`, else the installed `/run/loopd.sock`,
/// never a `loopd.sock` that merely exists in the working directory (the
/// rule takes no file system at all). loopctl's tests run the built tool,
/// whose default is this rule, in a directory that has one.
@Suite("LoopdClient: the default socket")
struct DefaultSocketTests {
    @Test("LOOPD_SOCKET when set and not empty, else /run/loopd.sock; never ./loopd.sock by itself")
    func theDefaultSocketRule() {
        #expect(LoopdClient.installedSocketPath == "/run/loopd.sock")
        #expect(LoopdClient.socketEnvironmentVariable == "LOOPD_SOCKET")
        let named = ["LOOPD_SOCKET": "/srv/loopd/loopd.sock"]
        #expect(LoopdClient.defaultSocketPath(environment: { named[$0] }) == "/srv/loopd/loopd.sock")
        #expect(LoopdClient.defaultSocketPath(environment: { _ in "" }) == "/run/loopd.sock")
        #expect(LoopdClient.defaultSocketPath(environment: { _ in nil }) == "/run/loopd.sock")
        let development = ["LOOPD_SOCKET": "./loopd.sock"]
        #expect(LoopdClient.defaultSocketPath(environment: { development[$0] }) == "./loopd.sock")
    }

    @Test("the process's default follows its environment")
    func theProcessDefault() {
        let named = LoopdClient.defaultSocketPath
        if let variable = getenv("LOOPD_SOCKET").map({ String(cString: $0) }), !variable.isEmpty {
            #expect(named == variable)
        } else {
            #expect(named == "/run/loopd.sock")
        }
    }
}

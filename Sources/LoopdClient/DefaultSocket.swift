internal import LoopPlatform

extension LoopdClient {
    /// Where an installed loopd listens: the socket that `loopd.socket`
    /// (systemd) or loopd run as root makes, in a directory only root may
    /// write to.
    public static let installedSocketPath = "/run/loopd.sock"

    /// The environment variable that names the daemon's socket for every
    /// client of loopd (`loopctl`, this library, the Python client).
    public static let socketEnvironmentVariable = "LOOPD_SOCKET"

    /// The socket to use when the program was given none: `$LOOPD_SOCKET`
    /// when it is set and not empty, else ``installedSocketPath``. Read
    /// anew at each access.
    ///
    /// A `loopd.sock` in the working directory (where `make run` puts the
    /// development daemon's) is never chosen by itself: whoever made that
    /// file would receive the requests, so it is used only when named,
    /// as `LOOPD_SOCKET=$PWD/loopd.sock` or as an explicit path.
    ///
    /// ```swift
    /// let client = try await LoopdClient.connect(socketPath: LoopdClient.defaultSocketPath)
    /// ```
    public static var defaultSocketPath: String {
        defaultSocketPath(environment: environmentVariable)
    }

    /// ``defaultSocketPath`` with `environment` in place of the process's
    /// environment: the one rule, for tools that keep their environment
    /// behind a seam of their own.
    public static func defaultSocketPath(environment: (String) -> String?) -> String {
        if let named = environment(socketEnvironmentVariable), !named.isEmpty { return named }
        return installedSocketPath
    }
}

/// loopd's release version, written here and nowhere else: `loopd --version`,
/// `loopctl --version` and the `ping` reply print it, and the Makefile reads
/// it from the line below for the Debian package (`make deb`) and the manuals.
public enum LoopdVersion {
    /// `MAJOR.MINOR.PATCH`.
    public static let current = "0.2.0"
}

import LoopPlatform

/// A kernel call that failed: what LoopRuntime's kernel sources throw.
///
/// ``LoopSignalSource/init(signals:order:_:)``,
/// ``LoopProcessSource/init(pid:order:_:)`` and
/// ``LoopProcessSource/send(signal:)`` throw it, and
/// ``LoopPortError/system(_:)`` carries it. It is the error type of
/// LoopRuntime's platform module, re-exported under the same name so that
/// code importing only LoopRuntime can name and catch it. Its members:
///
/// - `call`: the call that failed, such as `"signalfd"` or `"pidfd_open"`;
/// - `errno`: the `errno` value the call set;
/// - `detail`: what the call was about (a path, a program), when known;
/// - `description`: all three as one line, such as
///   `"pidfd_open: No such process (errno 3)"`;
/// - `isCallerBug`: true for `EBADF` and `EFAULT`, a descriptor or buffer
///   the caller did not own rather than a refusal by the kernel.
public typealias PlatformError = LoopPlatform.PlatformError

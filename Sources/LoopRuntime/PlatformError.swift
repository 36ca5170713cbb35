import LoopPlatform

/// A kernel call that failed, with the call's name and its `errno`: what
/// the throwing initializers of LoopRuntime's kernel sources throw
/// (`LoopSignalSource`, `LoopProcessSource`, port sockets).
public typealias PlatformError = LoopPlatform.PlatformError

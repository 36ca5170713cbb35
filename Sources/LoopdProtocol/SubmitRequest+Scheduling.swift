extension SubmitRequest {
    /// The priority of a job that names none: 2^31, the middle of the
    /// unsigned 32-bit range, as beanstalkd's default is. Lower runs first,
    /// so a client can ask for more or for less urgency than the default.
    public static let defaultPriority: UInt32 = 1 << 31
}

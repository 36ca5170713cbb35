import Prometheus

/// The fleet node's series, in the daemon's registry beside its own.
final class FleetMetrics {
    private let connectedGauge: Gauge
    private let connects: Counter
    private let roundTrips: ValueHistogram
    private let deadDeclared: Counter
    private let claims: Counter
    private let fencedEnds: Counter
    private let rescues: Counter
    private let submitted: Counter

    /// Upper bounds (seconds) of the round trip buckets: from 100 µs (a
    /// socket on the same host) to 5 s (a database under strain).
    static let roundTripBuckets: [Double] = [
        0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5,
    ]

    init(registry: PrometheusCollectorRegistry) {
        connectedGauge = registry.makeGauge(descriptor: DaemonMetrics.name(
            "fleet", "database_connected", nil, "1 while this node is connected to the fleet's database, else 0."))
        connects = registry.makeCounter(descriptor: DaemonMetrics.name(
            "fleet", "database_connects", "total", "Connections made to the fleet's database, the first included."))
        roundTrips = registry.makeValueHistogram(
            descriptor: DaemonMetrics.name("fleet", "database_round_trip", "seconds",
                                           "Time from sending each statement to the fleet's database to its last result."),
            labels: [], buckets: FleetMetrics.roundTripBuckets)
        deadDeclared = registry.makeCounter(descriptor: DaemonMetrics.name(
            "fleet", "nodes_declared_dead", "total", "Nodes this node declared dead after they stopped heartbeating."))
        claims = registry.makeCounter(descriptor: DaemonMetrics.name(
            "fleet", "jobs_claimed", "total", "Attempts of fleet jobs this node claimed to run."))
        fencedEnds = registry.makeCounter(descriptor: DaemonMetrics.name(
            "fleet", "ends_fenced", "total",
            "Ends of fleet jobs this node ran that were refused: the job had been rescued or taken over meanwhile."))
        rescues = registry.makeCounter(descriptor: DaemonMetrics.name(
            "fleet", "jobs_rescued", "total", "Fleet jobs this node took back from a node whose lease ran out."))
        submitted = registry.makeCounter(descriptor: DaemonMetrics.name(
            "fleet", "jobs_submitted", "total", "Fleet jobs submitted through this node."))
    }

    func connected(_ up: Bool) {
        connectedGauge.set(Int64(up ? 1 : 0))
        if up { connects.increment() }
    }

    func roundTrip(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        roundTrips.record(Double(seconds) + Double(attoseconds) / 1e18)
    }

    func declaredDead() { deadDeclared.increment() }
    func claimed(_ n: Int) { if n > 0 { claims.increment(by: Int64(n)) } }
    func fenced() { fencedEnds.increment() }
    func rescued() { rescues.increment() }
    func submittedJob() { submitted.increment() }
}

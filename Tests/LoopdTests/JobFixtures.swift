import LoopRuntime
import LoopdProtocol
import Prometheus
@testable import LoopdCore

/// Jobs outside a daemon, on a real worker thread that runs nothing until
/// asked, for tests of the job types themselves.
final class JobFixture {
    let queue: WorkerQueue
    private let metrics = DaemonMetrics(registry: PrometheusCollectorRegistry())
    private var sequence: UInt64 = 0

    init(worker name: String = "w1", mode: String = "default") {
        let loop = Loop.current
        queue = WorkerQueue(worker: Worker(DaemonConfig.Worker(name: name, mode: mode)),
                            mailbox: LaneMailbox(mainLoop: loop) {}, mainLoop: loop, metrics: metrics,
                            kindSlots: KindSlots())
    }

    /// A new job, the next in submission order (or at `sequence`, which
    /// must come after every earlier job's).
    func job(_ id: String, _ request: SubmitRequest = SubmitRequest(action: "echo"), submittedAt: Int64 = 0,
             sequence: UInt64? = nil) -> Job {
        self.sequence = sequence ?? self.sequence + 1
        return Job(id: id, sequence: self.sequence, request: request, kind: queue.kind(of: request.action, EchoAction(), in: metrics),
                   origin: .submitted(JobSubmitter(JobOwner(uid: 0, gid: 0))), acceptedAt: 0, submittedAtUnixMs: submittedAt)
    }

    func stop() { queue.worker.stop() }
}

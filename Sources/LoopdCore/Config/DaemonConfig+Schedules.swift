import LoopdProtocol

extension DaemonConfig {
    /// One `[schedules.NAME]` table: a job submitted at every slot of a
    /// grid, by loopd itself (its jobs belong to loopd's own uid, so
    /// administrators see and manage them).
    public struct Schedule: Sendable, Equatable {
        /// The table's name: `schedules`, `trigger` and the journal's `SCHEDULE=` use it.
        public var name: String
        /// The job each slot submits: `action`, `args`, placement and the
        /// submit options (never waited for).
        public var job: SubmitRequest
        /// `every` or `cron` (with `zone`).
        var when: ScheduleWhen
        /// `catch_up`: what happens to slots loopd missed.
        public var catchUp = CatchUp.one
        /// `catch_up_limit`: the most runs one look at a schedule makes with `catch_up = "all"`.
        public var catchUpLimit = 100
        /// `overlap`: what a slot does while the previous run is still waiting or running.
        public var overlap = Overlap.skip
        /// `jitter`: the upper bound of the schedule's fixed delay after each slot.
        public var jitterMs: Int64 = 0

        init(name: String, job: SubmitRequest, when: ScheduleWhen) {
            self.name = name
            self.job = job
            self.when = when
        }

        /// `catch_up` values.
        public enum CatchUp: String, Sendable, Equatable, CaseIterable {
            /// One run for all the slots missed, then back on the grid (R13).
            case one
            /// One run per missed slot, the latest `catch_up_limit` of them.
            case all
            /// No run for a missed slot; the next slot on time runs.
            case none
        }

        /// `overlap` values.
        public enum Overlap: String, Sendable, Equatable, CaseIterable {
            /// The slot does not run (counted as skipped).
            case skip
            /// The slot runs anyway: behind the previous run on its worker
            /// (with `worker` or `key`), beside it on another (with `any`).
            case queue
            /// The previous run is cancelled, then the slot runs.
            case cancelPrevious = "cancel_previous"
        }
    }
}

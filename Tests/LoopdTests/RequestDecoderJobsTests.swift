import Testing
import LoopdProtocol

/// Decoding `jobs` and `wait` requests: every field, its default, and every
/// way to get it wrong.
@Suite struct RequestDecoderJobsTests {
    static func decode(_ line: String) -> Result<Request, RequestDecoder.DecodeFailure> {
        RequestDecoder.decode(Array(line.utf8))
    }

    static func operation(_ line: String) throws -> LoopdProtocol.Operation {
        try decode(line).get().operation
    }

    /// The refusal for `line`; records an issue when it decodes.
    static func refusal(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) -> ProtocolError? {
        switch decode(line) {
        case .success(let request):
            Issue.record("decoded \(line) as \(request)", sourceLocation: sourceLocation)
            return nil
        case .failure(let failure):
            return failure.error
        }
    }

    // MARK: jobs

    @Test("jobs with no fields: every state, first page of 100")
    func jobsDefaults() throws {
        #expect(try Self.operation(#"{"id":1,"op":"jobs"}"#) == .jobs(JobsQuery()))
        let q = JobsQuery()
        #expect(q.states == nil && q.worker == nil && q.action == nil && q.submittedSinceUnixMs == nil)
        #expect(q.limit == 100 && JobsQuery.defaultLimit == 100 && JobsQuery.maxLimit == 1000 && q.cursor == nil)
        // null is absent, as for every op.
        #expect(try Self.operation(#"{"op":"jobs","state":null,"worker":null,"action":null,"since":null,"limit":null,"cursor":null}"#)
            == .jobs(JobsQuery()))
    }

    @Test("jobs with every field")
    func jobsAllFields() throws {
        let line = #"{"id":"p","op":"jobs","state":["queued","held","timed_out"],"worker":"w1","action":"sleep","since":"2026-11-24T07:01:02.345Z","limit":1000,"cursor":"opaque/+=="}"#
        let expected = JobsQuery(states: [.queued, .held, .timedOut], worker: "w1", action: "sleep",
                                 submittedSinceUnixMs: 1_795_503_662_345, limit: 1000, cursor: "opaque/+==")
        #expect(try Self.decode(line).get() == Request(id: .string("p"), operation: .jobs(expected)))
    }

    @Test("fleet: a boolean, false by default; retry and discard refuse it (fleet jobs)")
    func jobsFleet() throws {
        var fleet = JobsQuery()
        fleet.fleet = true
        #expect(try Self.operation(#"{"op":"jobs","fleet":true}"#) == .jobs(fleet))
        #expect(try Self.operation(#"{"op":"jobs","fleet":false}"#) == .jobs(JobsQuery()))
        #expect(Self.refusal(#"{"op":"jobs","fleet":"yes"}"#)?.message == #""fleet" must be true or false, not string"#)
        for op in ["retry", "discard"] {
            #expect(Self.refusal(#"{"op":"\#(op)","fleet":true}"#)?.message == #""\#(op)" is about this host's jobs: it takes no "fleet""#)
        }
        // And submit's: fleet and node.
        guard case .submit(let s) = try Self.operation(#"{"op":"submit","action":"echo","fleet":true,"node":"web-2"}"#) else {
            Issue.record("not a submit")
            return
        }
        #expect(s.fleet == true && s.node == "web-2")
    }

    @Test("with_fleet: this host's jobs and the fleet's together; not with fleet, nor in retry or discard")
    func jobsWithFleet() throws {
        var both = JobsQuery()
        both.withFleet = true
        #expect(try Self.operation(#"{"op":"jobs","with_fleet":true}"#) == .jobs(both))
        #expect(Self.refusal(#"{"op":"jobs","with_fleet":true,"fleet":true}"#)?.message
            == #""fleet" lists the fleet's jobs alone, "with_fleet" this host's and the fleet's: give one"#)
        for op in ["retry", "discard"] {
            #expect(Self.refusal(#"{"op":"\#(op)","with_fleet":true}"#)?.message == #""\#(op)" is about this host's jobs: it takes no "with_fleet""#)
        }
    }

    @Test("state: one name or an array of names, every state by its wire name")
    func jobsStates() throws {
        #expect(try Self.operation(#"{"op":"jobs","state":"running"}"#) == .jobs(JobsQuery(states: [.running])))
        #expect(try Self.operation(#"{"op":"jobs","state":"timed_out"}"#) == .jobs(JobsQuery(states: [.timedOut])))
        let all = JobState.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ",")
        #expect(try Self.operation(#"{"op":"jobs","state":[\#(all)]}"#) == .jobs(JobsQuery(states: JobState.allCases)))
        #expect(try Self.operation(#"{"op":"jobs","state":["cancelled","delayed"]}"#) == .jobs(JobsQuery(states: [.cancelled, .delayed])))
    }

    @Test("state: an unknown name is refused by name; wrong types, empty, too many and repeated arrays too")
    func jobsStateRefusals() {
        let unknown = Self.refusal(#"{"op":"jobs","state":"sleeping"}"#)
        #expect(unknown?.code == .badRequest)
        #expect(unknown?.message.contains(#""sleeping""#) == true, "\(String(describing: unknown))")
        #expect(Self.refusal(#"{"op":"jobs","state":["queued","timedOut"]}"#)?.message.contains(#""timedOut""#) == true)
        #expect(Self.refusal(#"{"op":"jobs","state":"Queued"}"#)?.message.contains(#""Queued""#) == true)
        #expect(Self.refusal(#"{"op":"jobs","state":""}"#)?.code == .badRequest)
        for line in [
            #"{"op":"jobs","state":[]}"#,
            #"{"op":"jobs","state":["queued","queued"]}"#,
            #"{"op":"jobs","state":["delayed","queued","held","running","completed","failed","timed_out","cancelled","queued"]}"#,
            #"{"op":"jobs","state":1}"#,
            #"{"op":"jobs","state":true}"#,
            #"{"op":"jobs","state":{"queued":true}}"#,
            #"{"op":"jobs","state":[1]}"#,
            #"{"op":"jobs","state":[null]}"#,
            #"{"op":"jobs","state":[["queued"]]}"#,
        ] {
            #expect(Self.refusal(line)?.code == .badRequest, "\(line)")
        }
    }

    @Test("worker and action follow the rules of every name")
    func jobsNames() throws {
        #expect(try Self.operation(#"{"op":"jobs","worker":"w2"}"#) == .jobs(JobsQuery(worker: "w2")))
        #expect(try Self.operation(#"{"op":"jobs","action":"date"}"#) == .jobs(JobsQuery(action: "date")))
        let longest = String(repeating: "a", count: 256)
        #expect(try Self.operation(#"{"op":"jobs","action":"\#(longest)"}"#) == .jobs(JobsQuery(action: longest)))
        for line in [
            #"{"op":"jobs","worker":""}"#, #"{"op":"jobs","worker":7}"#, #"{"op":"jobs","worker":["w1"]}"#,
            #"{"op":"jobs","action":""}"#, #"{"op":"jobs","action":"a\u0000b"}"#, #"{"op":"jobs","action":false}"#,
            #"{"op":"jobs","action":"\#(longest)a"}"#,
        ] {
            #expect(Self.refusal(line)?.code == .badRequest, "\(line)")
        }
    }

    @Test("since: RFC 3339 with Z or an offset, fraction optional")
    func jobsSince() throws {
        #expect(try Self.operation(#"{"op":"jobs","since":"2026-11-24T07:01:02.345Z"}"#)
            == .jobs(JobsQuery(submittedSinceUnixMs: 1_795_503_662_345)))
        #expect(try Self.operation(#"{"op":"jobs","since":"2026-11-24T08:01:02+01:00"}"#)
            == .jobs(JobsQuery(submittedSinceUnixMs: 1_795_503_662_000)))
        #expect(try Self.operation(#"{"op":"jobs","since":"1969-12-31T23:59:59.999Z"}"#) == .jobs(JobsQuery(submittedSinceUnixMs: -1)))
        for line in [
            #"{"op":"jobs","since":"yesterday"}"#, #"{"op":"jobs","since":"10m"}"#, #"{"op":"jobs","since":""}"#,
            #"{"op":"jobs","since":"2026-11-24"}"#, #"{"op":"jobs","since":"2026-11-24T07:01:02"}"#,
            #"{"op":"jobs","since":"2026-02-30T00:00:00Z"}"#, #"{"op":"jobs","since":1795503662345}"#,
            #"{"op":"jobs","since":["2026-11-24T07:01:02Z"]}"#,
        ] {
            let error = Self.refusal(line)
            #expect(error?.code == .badRequest, "\(line)")
            #expect(error?.message.contains(#""since""#) == true, "\(line): \(String(describing: error))")
        }
    }

    @Test("limit: an integer 1...1000")
    func jobsLimit() throws {
        #expect(try Self.operation(#"{"op":"jobs","limit":1}"#) == .jobs(JobsQuery(limit: 1)))
        #expect(try Self.operation(#"{"op":"jobs","limit":1000}"#) == .jobs(JobsQuery(limit: 1000)))
        for line in [
            #"{"op":"jobs","limit":0}"#, #"{"op":"jobs","limit":1001}"#, #"{"op":"jobs","limit":-1}"#,
            #"{"op":"jobs","limit":1.5}"#, #"{"op":"jobs","limit":"10"}"#, #"{"op":"jobs","limit":1e2}"#,
            #"{"op":"jobs","limit":99999999999999999999}"#,
        ] {
            let error = Self.refusal(line)
            #expect(error?.code == .badRequest, "\(line)")
            #expect(error?.message.contains(#""limit""#) == true, "\(line)")
        }
    }

    @Test("cursor: any string of 1 to 256 bytes")
    func jobsCursor() throws {
        let longest = String(repeating: "c", count: 256)
        #expect(try Self.operation(#"{"op":"jobs","cursor":"\#(longest)"}"#) == .jobs(JobsQuery(cursor: longest)))
        #expect(try Self.operation(#"{"op":"jobs","cursor":"a b\"c\u00e9"}"#) == .jobs(JobsQuery(cursor: "a b\"c\u{e9}")))
        for line in [
            #"{"op":"jobs","cursor":""}"#, #"{"op":"jobs","cursor":"\#(longest)c"}"#, #"{"op":"jobs","cursor":5}"#,
            #"{"op":"jobs","cursor":{}}"#,
        ] {
            let error = Self.refusal(line)
            #expect(error?.code == .badRequest, "\(line)")
            #expect(error?.message.contains(#""cursor""#) == true, "\(line)")
        }
    }

    @Test("jobs: unknown fields are refused, as for every op")
    func jobsUnknownFields() {
        for line in [
            #"{"op":"jobs","states":["queued"]}"#, #"{"op":"jobs","job":"j1"}"#, #"{"op":"jobs","wait":true}"#,
            #"{"op":"jobs","timeout_ms":5}"#, #"{"op":"jobs","offset":100}"#,
        ] {
            let error = Self.refusal(line)
            #expect(error?.code == .badRequest, "\(line)")
            #expect(error?.message.hasPrefix("unknown field") == true, "\(line): \(String(describing: error))")
        }
    }

    // MARK: wait

    @Test("wait: a job, and a timeout of 1 ms to a day")
    func waitFields() throws {
        #expect(try Self.decode(#"{"id":3,"op":"wait","job":"mwrj646y-13"}"#).get()
            == Request(id: .integer(3), operation: .wait(job: "mwrj646y-13", timeoutMs: nil)))
        #expect(try Self.operation(#"{"op":"wait","job":"j","timeout_ms":1}"#) == .wait(job: "j", timeoutMs: 1))
        #expect(try Self.operation(#"{"op":"wait","job":"j","timeout_ms":86400000}"#) == .wait(job: "j", timeoutMs: 86_400_000))
        #expect(try Self.operation(#"{"op":"wait","job":"j","timeout_ms":null}"#) == .wait(job: "j", timeoutMs: nil))
    }

    @Test("wait: a missing or bad job, a bad timeout, unknown fields")
    func waitRefusals() {
        for (line, mentions) in [
            (#"{"op":"wait"}"#, "job"), (#"{"op":"wait","job":""}"#, "job"), (#"{"op":"wait","job":12}"#, "job"),
            (#"{"op":"wait","job":null}"#, "job"), (#"{"op":"wait","timeout_ms":5}"#, "job"),
            (#"{"op":"wait","job":"j","timeout_ms":0}"#, "timeout_ms"),
            (#"{"op":"wait","job":"j","timeout_ms":86400001}"#, "timeout_ms"),
            (#"{"op":"wait","job":"j","timeout_ms":-5}"#, "timeout_ms"),
            (#"{"op":"wait","job":"j","timeout_ms":2.5}"#, "timeout_ms"),
            (#"{"op":"wait","job":"j","timeout_ms":"5"}"#, "timeout_ms"),
            (#"{"op":"wait","job":"j","wait":true}"#, "unknown field"),
            (#"{"op":"wait","job":"j","timeout":5}"#, "unknown field"),
            (#"{"op":"wait","job":"j","worker":"w1"}"#, "unknown field"),
        ] {
            let error = Self.refusal(line)
            #expect(error?.code == .badRequest, "\(line)")
            #expect(error?.message.contains(mentions) == true, "\(line): \(String(describing: error))")
        }
    }

    @Test("a refused jobs or wait request keeps its id for the error reply")
    func refusalsKeepTheID() {
        for line in [#"{"id":9,"op":"jobs","limit":0}"#, #"{"id":9,"op":"wait","job":"j","timeout_ms":0}"#] {
            guard case .failure(let failure) = Self.decode(line) else {
                Issue.record("decoded \(line)")
                continue
            }
            #expect(failure.id == .integer(9))
        }
    }
}

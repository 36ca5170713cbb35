import Logging
import Testing
@testable import LoopdCore

/// Metadata keys become valid journal field names, and the
/// stderr fallback is chosen when JOURNAL_STREAM does not name our stderr.
@Suite struct JournalFieldTests {
    @Test(arguments: [
        ("JOB_ID", "JOB_ID"),
        ("job_id", "JOB_ID"),
        ("worker.name", "WORKER_NAME"),
        ("_private", "PRIVATE"),
        ("9lives", "LIVES"),
        ("clé", "CL_"),
        ("a-b c", "A_B_C"),
    ])
    func metadataKeysAreSanitized(_ key: String, _ field: String) {
        #expect(JournalLogHandler.fieldName(key) == field)
    }

    @Test func unusableKeysAreDropped() {
        #expect(JournalLogHandler.fieldName("___") == nil)
        #expect(JournalLogHandler.fieldName("") == nil)
        #expect(JournalLogHandler.fieldName(String(repeating: "K", count: 100))?.count == 64)
    }

    @Test func priorityFollowsSyslog() {
        #expect(JournalLogHandler.priority(.critical) == 2)
        #expect(JournalLogHandler.priority(.error) == 3)
        #expect(JournalLogHandler.priority(.warning) == 4)
        #expect(JournalLogHandler.priority(.notice) == 5)
        #expect(JournalLogHandler.priority(.info) == 6)
        #expect(JournalLogHandler.priority(.debug) == 7)
    }

    @Test func journalStreamMustMatchStderr() {
        #expect(!stderrIsJournal(environment: [:]))
        #expect(!stderrIsJournal(environment: ["JOURNAL_STREAM": "1:2"]))
        #expect(!stderrIsJournal(environment: ["JOURNAL_STREAM": "garbage"]))
    }
}

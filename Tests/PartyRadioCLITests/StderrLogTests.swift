import PartyRadioCore
import Synchronization
import Testing

@testable import PartyRadioCLI

@Suite struct StderrLogTests {
    @Test func timestampsAreUTCWithMilliseconds() {
        #expect(StderrLog.timestamp(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(StderrLog.timestamp(milliseconds: 1_796_058_301_123) == "2026-11-30T17:05:01.123Z")
        #expect(StderrLog.timestamp(milliseconds: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(StderrLog.timestamp(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
        #expect(StderrLog.timestamp(milliseconds: 4_102_444_799_999) == "2099-12-31T23:59:59.999Z")
    }

    @Test func oneLinePerCall() {
        #expect(
            StderrLog.line(.discovery, "station appeared", at: 1_796_058_301.1234)
                == "2026-11-30T17:05:01.123Z [discovery] station appeared\n")
        #expect(StderrLog.line(.catalog, "a\nb", at: 0) == "1970-01-01T00:00:00.000Z [catalog] a\\nb\n")
    }

    @Test func theHandlerWritesWholeLinesToStderr() {
        let writes = Mutex<[(Console.Stream, String)]>([])
        let console = Console { stream, text in writes.withLock { $0.append((stream, text)) } }
        let handler = StderrLog.handler(console: console, clock: { 0.5 })
        handler(.wire, "dropped 1 datagram")
        let written = writes.withLock { $0 }
        #expect(written.count == 1)
        #expect(written.first?.0 == .err)
        #expect(written.first?.1 == "1970-01-01T00:00:00.500Z [wire] dropped 1 datagram\n")
    }

    /// The one test that turns the process-wide log on (through `-v`, as a user would).
    @Test func verboseLogsTheCatalogsRequests() async {
        let run = await runCLI("search", ["daft", "punk", "-v"], clock: { 1_796_058_301.123 })
        #expect(run.code == 0, "\(run.err)")
        let lines = run.err.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("2026-11-30T17:05:01.123Z [cli] partyradio ") })
        let asked = "2026-11-30T17:05:01.123Z [catalog] GET http://"
        #expect(lines.contains { $0.hasPrefix(asked) && $0.hasSuffix("→ network") })
        #expect(lines.contains { $0.hasPrefix("2026-11-30T17:05:01.123Z [catalog] left out ") })
        #expect(run.out.contains("Get Lucky"))  // results stay on stdout
    }
}

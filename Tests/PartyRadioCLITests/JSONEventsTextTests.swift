import Foundation
import PartyRadioCore
import Synchronization
import Testing

@testable import PartyRadioCLI

/// `--json-events` carries a station's name, titles and guests' words to whatever reads it (a script,
/// a terminal running `jq`): the same untrusted text as the live view, cleaned the same way.
@Suite struct JSONEventsTextTests {
    /// A hostile station's name: a right-to-left override, an escape sequence, a zero-width space.
    static let hostile = "Bob\u{202E}3pm.exe\u{1B}[31m\u{200B}"

    @Test func aListenersEventsCarryNoOverrideEscapeOrInvisibleCharacter() throws {
        let out = Mutex("")
        let console = Console(isTerminal: false) { _, text in out.withLock { $0 += text } }
        let printer = EventPrinter(jsonEvents: true, role: "listener", console: console)
        let snapshot = StateSnapshot(
            stationName: Self.hostile,
            nowPlaying: Track(
                id: "t1", title: Self.hostile, artist: "Band", album: "", durationMs: 30_000, source: "x"),
            anchor: .playing(at: 0, djTime: DJTime(ns: 0)), tally: Tally(), listenerCount: 1, queueLength: 1,
            queueIndex: 0, sentAtNs: 0)
        printer.report(.state(snapshot, positionNs: 0, change: .track))
        printer.report(.stationSilent(name: Self.hostile))
        printer.report(.stationGone(name: Self.hostile, reason: "withdrawn"))
        let lines = out.withLock { $0 }.split(separator: "\n")
        #expect(lines.count == 3)
        for line in lines {
            for scalar in ["\u{202E}", "\u{1B}", "\u{200B}", "\\u202e", "\\u001b", "[31m"] {
                #expect(!line.contains(scalar), "\(scalar.debugDescription) in \(line)")
            }
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect((object?["station"] as? String) == "Bob3pm.exe", "\(line)")
        }
    }
}

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

    /// A speaker's name and room are its own words: the DJ's `speakers` event and its line carry them
    /// cleaned, whatever reached the list.
    @Test func theDJsSpeakersCarryNoOverrideEscapeOrInvisibleCharacter() throws {
        let out = Mutex("")
        let console = Console(isTerminal: false) { _, text in out.withLock { $0 += text } }
        let entry = SpeakerBook.Entry(
            key: PublicKey(bytes: [UInt8](repeating: 5, count: 32))!, name: Self.hostile, room: Self.hostile,
            host: "10.0.0.5", address: PeerAddress(host: "10.0.0.5", port: 40_000),
            settings: SpeakerSettings(volume: 20, muted: true, delayMs: -180), playing: true, lastControl: 0,
            lastHeard: LocalTime(ns: 0))
        EventPrinter(jsonEvents: true, role: "dj", console: console).report(.speakers([entry]))
        EventPrinter(jsonEvents: false, role: "dj", console: console).report(.speakers([entry]))
        let lines = out.withLock { $0 }.split(separator: "\n")
        #expect(lines.count == 2)
        for line in lines {
            for scalar in ["\u{202E}", "\u{1B}", "\u{200B}", "\\u202e", "\\u001b", "[31m"] {
                #expect(!line.contains(scalar), "\(scalar.debugDescription) in \(line)")
            }
        }
        let object = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
        #expect(object?["event"] as? String == "speakers")
        let speaker = (object?["speakers"] as? [[String: Any]])?.first
        #expect(speaker?["name"] as? String == "Bob3pm.exe" && speaker?["room"] as? String == "Bob3pm.exe")
        #expect(speaker?["volume"] as? Int == 20 && speaker?["muted"] as? Bool == true)
        #expect(speaker?["delay_ms"] as? Int == -180 && speaker?["playing"] as? Bool == true)
        #expect(speaker?["host"] as? String == "10.0.0.5")
        #expect(
            lines[1].hasPrefix("Speakers: Bob3pm.exe (Bob3pm.exe) at 10.0.0.5: volume 20 muted, delay -180 ms, playing")
        )
    }
}

import Foundation
import PartyRadioCore
import Synchronization
import Testing

@testable import PartyRadioCLI

/// A live station's counters in `--json-events` (docs/LIVE.md, "Counters"): the listener's
/// `live_status` with what its machine asked for and dropped, the DJ's `live_sent`; the field names
/// are restated here as the docs list them.
@Suite struct LiveEventsTests {
    func lines(role: String, _ events: [NodeEvent]) throws -> [[String: Any]] {
        let out = Mutex("")
        let console = Console(isTerminal: false) { _, text in out.withLock { $0 += text } }
        let printer = EventPrinter(jsonEvents: true, role: role, console: console)
        for event in events { printer.report(event) }
        return try out.withLock { $0 }.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test("live_status carries the output's counters, the frames asked for again and the drops by reason")
    func listenerStatus() throws {
        var counters = LiveCounters()
        counters.received = 900
        counters.played = 880
        var dropped = DropCounters()
        dropped.record(reason: "bad_signature")
        dropped.record(reason: "bad_signature")
        dropped.record(reason: "replayed")
        let status = LiveStatus(
            counters: counters, placements: 1, skipped: 0, errorUs: -120, ppm: 12.4,
            network: LiveListenerNetwork(asked: 31, arrivedAfterAsking: 27, dropped: dropped))
        let line = try #require(try lines(role: "listener", [.liveStatus(status)]).first)
        #expect(line["event"] as? String == "live_status")
        #expect(line["received"] as? Int == 900 && line["played"] as? Int == 880 && line["ppm"] as? Int == 12)
        #expect(line["asked"] as? Int == 31 && line["arrived_after_asking"] as? Int == 27)
        #expect(line["dropped"] as? [String: Int] == ["bad_signature": 2, "replayed": 1])
    }

    @Test("live_sent says the DJ's frames, repairs, resends and drops; the terminal says nothing of it")
    func djSent() throws {
        var dropped = DropCounters()
        dropped.record(reason: "malformed")
        let sent = LiveSent(
            frames: 6000, repairs: 3000, shortBlocks: 2, resent: 40, resendsMissed: 3, resendsOverBudget: 5,
            resendsIgnored: 7, dropped: dropped)
        let line = try #require(try lines(role: "dj", [.liveSent(sent)]).first)
        #expect(line["event"] as? String == "live_sent")
        #expect(line["frames"] as? Int == 6000 && line["repairs"] as? Int == 3000 && line["short_blocks"] as? Int == 2)
        #expect(line["resent"] as? Int == 40 && line["resends_missed"] as? Int == 3)
        #expect(line["resends_over_budget"] as? Int == 5 && line["resends_ignored"] as? Int == 7)
        #expect(line["dropped"] as? [String: Int] == ["malformed": 1])
        let out = Mutex("")
        let console = Console(isTerminal: false) { _, text in out.withLock { $0 += text } }
        EventPrinter(jsonEvents: false, role: "dj", console: console).report(.liveSent(sent))
        #expect(out.withLock { $0 }.isEmpty)
    }
}

import PartyRadioCore
import Synchronization
import Testing

@testable import PartyRadioCLI

/// The DJ's line for a counted vote names the guest by the name it gave, not by its key.
@Suite struct VoterNameTests {
    /// What a line-mode printer (not a terminal) prints for `event`.
    func printed(_ event: NodeEvent, json: Bool = false) -> String {
        let out = Mutex("")
        let console = Console(isTerminal: false) { _, text in out.withLock { $0 += text } }
        EventPrinter(jsonEvents: json, role: "dj", console: console, environment: [:]).report(event)
        return out.withLock { $0 }
    }

    let fingerprint = "ab12cd34ef56"

    @Test func aVoteIsNamedByTheGuestsName() {
        let line = printed(
            .voteCounted(trackID: "t1", choice: .up, tally: Tally(up: 2, down: 1), voter: fingerprint, name: "Ann"))
        #expect(line.hasPrefix("Vote up from Ann: 2 up, 1 down."), "\(line)")
        #expect(!line.contains(fingerprint))
    }

    @Test func aNameIsShownWithoutControlsAndAStrangerByItsFingerprint() {
        let hostile = printed(
            .voteCounted(
                trackID: "t1", choice: .down, tally: Tally(down: 1), voter: fingerprint,
                name: "\u{1B}]0;pwned\u{07}Eve\u{202E}gpj"))
        #expect(!hostile.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\n" })
        #expect(!hostile.unicodeScalars.contains { $0.properties.isBidiControl })
        #expect(hostile.contains("Eve"), "\(hostile)")
        for name in [nil, "", "\u{1B}\u{202E}"] as [String?] {
            let line = printed(
                .voteCounted(trackID: "t1", choice: .up, tally: Tally(up: 1), voter: fingerprint, name: name))
            #expect(line.hasPrefix("Vote up from \(fingerprint): 1 up"), "\(String(describing: name)): \(line)")
        }
    }

    @Test func jsonKeepsTheKeyAndAddsTheName() {
        let named = printed(
            .voteCounted(trackID: "t1", choice: .up, tally: Tally(up: 1), voter: fingerprint, name: "Ann"), json: true)
        #expect(named.contains("\"voter\":\"\(fingerprint)\"") && named.contains("\"name\":\"Ann\""), "\(named)")
        let unnamed = printed(
            .voteCounted(trackID: "t1", choice: .up, tally: Tally(up: 1), voter: fingerprint, name: nil), json: true)
        #expect(!unnamed.contains("\"name\""), "\(unnamed)")
    }
}

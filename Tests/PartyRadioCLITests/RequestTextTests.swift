import Synchronization
import Testing

@testable import PartyRadioCLI
@testable import PartyRadioCore

/// How answers to requests and what plays next are said: sentences, lines and JSON. Text from
/// the network never brings a control character to the terminal.
@Suite struct RequestTextTests {
    let hostile = "Evil\u{1B}[2J\u{07} Title"

    @Test func sentencesSayWhatHappenedAndDropControlCharacters() {
        let queued = RequestAck(
            requestID: 1, status: .queued, queueID: 7, position: 2, limit: 3, title: hostile, artist: "Band\u{1B}]0;x")
        let text = AckText.sentence(queued)
        // Whole escape sequences go, not their ESC alone (an OSC never ended takes the rest).
        #expect(text == "Queued “Evil Title” by Band: number 2 of the requests (request #7).")
        #expect(!text.unicodeScalars.contains { $0.properties.generalCategory == .control })
        let over = RequestAck(requestID: 1, status: .overLimit, limit: 2)
        #expect(
            AckText.sentence(over, station: "Roof\u{1B}[mtop")
                == "The DJ of 'Rooftop' refused the request: at most 2 requests per guest may wait; vote for others "
                + "meanwhile.")
        #expect(AckText.sentence(over, guest: "Bob\u{1B}") == AckText.sentence(over, guest: "Bob"))
        for status in RequestAck.Status.allCases {
            #expect(!AckText.sentence(RequestAck(requestID: 1, status: status)).isEmpty)
            #expect(status.name.allSatisfy { $0.isLowercase || $0 == "_" }, "\(status.name)")
        }
        #expect(Set(RequestAck.Status.allCases.map(\.name)).count == RequestAck.Status.allCases.count)
        #expect(Set(RequestVoteAck.Status.allCases.map(\.name)).count == RequestVoteAck.Status.allCases.count)
    }

    @Test func linesAndJSONOfWhatPlaysNext() {
        let list = QueueList(
            mode: .approve, total: 1,
            entries: [
                QueueList.Entry(
                    queueID: 3, trackID: "617154366", title: hostile, artist: "Daft Punk", requester: "Bob\u{1B}[1m",
                    tally: Tally(up: 2, down: 1), awaitingApproval: true),
                QueueList.Entry(
                    queueID: 0, trackID: "local:1", title: "Own", artist: "DJ", requester: "", tally: Tally(),
                    awaitingApproval: false),
            ])
        #expect(
            RequestText.lines(list) == [
                "#3 Evil Title — Daft Punk  asked by Bob  +2 −1  (awaiting approval)", "    Own — DJ",
            ])
        #expect(RequestText.lines(list, requestsOnly: true).count == 1)
        let json = JSON.object(RequestText.list(list)).rendered
        #expect(json.hasPrefix("{\"requests_mode\":\"approve\",\"requests_waiting\":1,\"up_next\":[{\"request_id\":3,"))
        #expect(json.contains("\"requested_by\":null") && json.contains("\"awaiting_approval\":true"))
    }

    @Test("on a live station what guests ask for are wishes: the line and the live view say so")
    func aLiveStationsRequestsAreWishes() {
        let list = QueueList(
            mode: .open, total: 1,
            entries: [
                QueueList.Entry(
                    queueID: 4, trackID: "wish:4", title: "Sandstorm", artist: "", requester: "Ann", tally: Tally(),
                    awaitingApproval: false)
            ])
        func printed(_ track: Track) -> String {
            let out = Mutex("")
            let console = Console(isTerminal: false) { _, text in out.withLock { $0 += text } }
            let printer = EventPrinter(jsonEvents: false, role: "dj", console: console)
            let snapshot = StateSnapshot(
                stationName: "Live Party", nowPlaying: track, anchor: .playing(at: 0, djTime: DJTime(ns: 0)),
                tally: Tally(), listenerCount: 1, queueLength: 1, queueIndex: 0, sentAtNs: 0)
            printer.report(.state(snapshot, positionNs: 0, change: .track))
            out.withLock { $0 = "" }
            printer.report(.upNext(list))
            return out.withLock { $0 }
        }
        #expect(printed(.live).hasPrefix("Wishes: #4 Sandstorm"), "\(printed(.live))")
        let file = Track(id: "t1", title: "Song", artist: "Band", album: "", durationMs: 1_000, source: "x")
        #expect(printed(file).hasPrefix("Requests: #4 Sandstorm"), "\(printed(file))")
        #expect(EventPrinter.upNextSection(["     #4"], live: true).lines.first?.contains("wishes") == true)
        #expect(EventPrinter.upNextSection(["     #4"], live: false).lines.first == "   up next:")
        #expect(EventPrinter.upNextSection([], live: true).lines.isEmpty)
    }
}

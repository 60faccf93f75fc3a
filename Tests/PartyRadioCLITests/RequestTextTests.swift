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
}

import Dispatch
import Foundation
import PartyRadioCore
import PartyRadioHTTP
import Testing

@testable import PartyRadioNode

/// The hub's waits: an event stream sleeps until the DJ publishes, a guest until the DJ answers,
/// and closing the hub (the DJ stopping) releases both at once.
@Suite struct WebHubTests {
    func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    @Test func aStreamWaitsForThePublishThatWakesIt() async {
        let hub = WebHub()
        hub.publish("{\"n\":1}", votes: VoteBook())
        let stream = hub.stream()
        let first = text(stream.next(clientGone: { false }))
        #expect(first?.contains("{\"n\":1}") == true && first?.hasPrefix("retry: 1000") == true)
        #expect(hub.openStreams == 1)
        async let next = onAThread { () -> String? in
            // A keep-alive ping comes first only if a loaded machine held the publish back past 5 s.
            var text = self.text(stream.next(clientGone: { false }))
            while text == "event: ping\ndata: {}\n\n" { text = self.text(stream.next(clientGone: { false })) }
            return text
        }
        try? await Task.sleep(for: .milliseconds(600))  // longer than a hang-up slice: it still waits
        hub.publish("{\"n\":2}", votes: VoteBook())
        let second = await next
        #expect(second == "event: state\ndata: {\"n\":2}\n\n", "woken by the publish (the keep-alive sends a ping)")
    }

    @Test func aStreamWithNothingNewSendsAPing() async {
        let hub = WebHub()
        let stream = hub.stream()
        _ = stream.next(clientGone: { false })
        let start = ContinuousClock.now
        let next = await onAThread { self.text(stream.next(clientGone: { false })) }
        #expect(next == "event: ping\ndata: {}\n\n")
        #expect(seconds(since: start) >= WebHub.keepAliveSeconds - 0.01)
    }

    @Test func aStreamWhoseClientHungUpEnds() async {
        let hub = WebHub()
        let stream = hub.stream()
        _ = stream.next(clientGone: { false })
        let next = await onAThread { stream.next(clientGone: { true }) }
        #expect(next == nil, "ended, not kept alive with a ping")
    }

    @Test(.timeLimit(.minutes(1))) func closingTheHubReleasesStreamsAndGuests() async {
        let hub = WebHub()
        let stream = hub.stream()
        _ = stream.next(clientGone: { false })
        let (ticket, _) = hub.ticket(realTimeNs: 1)
        // The guest's own timeout is far beyond the test's time limit: only the close ends it.
        async let streamEnd = onAThread { stream.next(clientGone: { false }) }
        async let answer = onAThread { hub.wait(for: ticket, timeout: 600) }
        try? await Task.sleep(for: .milliseconds(100))
        hub.close()
        #expect(await streamEnd == nil)
        #expect(await answer == nil)
    }

    @Test func aGuestWaitsForTheAnswerToItsTicket() async {
        let hub = WebHub()
        let (mine, _) = hub.ticket(realTimeNs: 1)
        let (other, _) = hub.ticket(realTimeNs: 1)
        async let answer = onAThread { hub.wait(for: mine, timeout: 30) }
        try? await Task.sleep(for: .milliseconds(50))
        hub.answer(other, .message(.hello(Hello(listenerName: "other"))))  // someone else's: waits on
        try? await Task.sleep(for: .milliseconds(50))
        hub.answer(mine, .message(.hello(Hello(listenerName: "mine"))))
        #expect(await answer == .message(.hello(Hello(listenerName: "mine"))), "a timeout would be nil")
        #expect(
            await onAThread { hub.wait(for: other, timeout: 0.1) } == .message(.hello(Hello(listenerName: "other"))))
    }

    @Test func aGuestGivesUpAfterItsTimeout() async {
        let hub = WebHub()
        let (ticket, _) = hub.ticket(realTimeNs: 1)
        let start = ContinuousClock.now
        #expect(await onAThread { hub.wait(for: ticket, timeout: 0.2) } == nil)
        #expect(seconds(since: start) >= 0.2)
        hub.answer(ticket, .message(.hello(Hello(listenerName: "late"))))  // gone with its waiter: nothing is kept
        #expect(await onAThread { hub.wait(for: ticket, timeout: 0.05) } == nil)
    }

    @Test func sequencesIncreaseAcrossTicketsAndHeartbeats() {
        let hub = WebHub()
        let a = hub.ticket(realTimeNs: 100).sequence
        let b = hub.sequence(realTimeNs: 50)
        let c = hub.ticket(realTimeNs: 0).sequence
        #expect(a == 100 && b == 101 && c == 102)
    }
}

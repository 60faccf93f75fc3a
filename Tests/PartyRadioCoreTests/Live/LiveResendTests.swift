import NodeTestSupport
import PartyRadioCore
import Testing

/// Resend requests (docs/LIVE.md, "Resend requests"): which frames a listener asks for again and
/// until when, what the DJ answers and to whom, and each listener's budget.
@Suite struct LiveResendTests {
    static let f = LiveFrameDuration.ms10.ns
    static let ms: Int64 = 1_000_000

    static func frame(_ sequence: UInt64) -> LiveFrame {
        LiveFrame(
            sequence: sequence, firstSample: DJTime(ns: Int64(sequence) * f), duration: .ms10,
            payload: [UInt8(truncatingIfNeeded: sequence), 1, 2])
    }

    /// When frame `n` reaches a listener on a clean link: sent as its last sample is read.
    static func arrival(_ n: UInt64) -> Int64 { Int64(n) * f + f + ms }

    @Test("a frame is asked for once a later one shows it was sent, again every 4 ms, until T + delay − lead")
    func asksWhileThereIsTime() {
        var gaps = LiveGapTracker()
        gaps.received(Self.frame(10))
        #expect(gaps.due(at: Self.arrival(10)).isEmpty && gaps.nextDue == nil, "nothing missing")
        gaps.received(Self.frame(12))
        let now = Self.arrival(12)  // frame 11's T is 110 ms; it can be played if here by 110 + 60 − 32
        #expect(gaps.due(at: now) == [LiveResend(firstSequence: 11, mask: 1)])
        #expect(gaps.due(at: now + 3 * Self.ms).isEmpty, "not before the retry interval")
        #expect(gaps.nextDue == now + 4 * Self.ms)
        #expect(gaps.due(at: now + 4 * Self.ms) == [LiveResend(firstSequence: 11, mask: 1)])
        // The next retry (139 ms) is past frame 11's last chance (110 + 60 − 32 = 138 ms): given up then.
        let lastChance = 110 * Self.ms + 60 * Self.ms - 32 * Self.ms
        #expect(gaps.nextDue == lastChance + 1)
        #expect(gaps.due(at: lastChance + 1).isEmpty && gaps.missingCount == 0, "too late: given up")
        #expect(gaps.asked == 2)
    }

    @Test("the last chance follows the delay the station's frames say, plus the listener's extra")
    func deadlineFollowsTheStationDelay() {
        var gaps = LiveGapTracker(settings: .init(extraNs: 20 * Self.ms))
        var frame10 = Self.frame(10)
        frame10.delayMs = 200
        var frame12 = Self.frame(12)
        frame12.delayMs = 200
        gaps.received(frame10)
        gaps.received(frame12)
        // Frame 11 (T = 110 ms) can be played if here by 110 + 200 + 20 − 32 = 298 ms.
        let lastChance = (110 + 200 + 20 - 32) * Self.ms
        #expect(gaps.due(at: lastChance) == [LiveResend(firstSequence: 11, mask: 1)])
        #expect(gaps.due(at: lastChance + 1).isEmpty && gaps.missingCount == 0, "given up after it")
        // A station whose delay leaves no room for an answer asks for nothing.
        var tight = LiveGapTracker()
        var a = Self.frame(10)
        a.delayMs = 30
        var b = Self.frame(12)
        b.delayMs = 30
        tight.received(a)
        tight.received(b)
        #expect(tight.due(at: Self.arrival(12)).isEmpty && tight.asked == 0)
    }

    @Test("a frame that comes (late, reordered, resent) is no longer asked for; nothing sent yet is ever asked")
    func onlyWhatWasSentAndLost() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            var gaps = LiveGapTracker()
            var received: Set<UInt64> = []
            var highest: UInt64 = 0
            var now: Int64 = 0
            for n in UInt64(0)..<200 {
                now = Self.arrival(n) + Int64.random(in: 0...(3 * Self.ms), using: &random)
                if Bool.random(using: &random) && n % 4 == 3 {
                    // A block's repair after its last frame: every frame of it was sent.
                    gaps.received(
                        LiveRepair(
                            firstSequence: n - 3, dataCount: 4, parityCount: 1, parityIndex: 0,
                            shard: [UInt8](repeating: 0, count: 15)))
                    highest = max(highest, n - 1)  // its last frame may still be on the way
                }
                if Double.random(in: 0..<1, using: &random) < 0.75 {
                    gaps.received(Self.frame(n))
                    received.insert(n)
                    highest = max(highest, n)
                }
                // Asked now and at the retry, 4 ms on (before the next frame is due).
                for time in [now, now + 4 * Self.ms] {
                    for request in gaps.due(at: time) {
                        for asked in request.sequences {
                            // The rule, restated: asked only for what was sent (a later frame or
                            // repair came) and has not come, while it can still be played.
                            #expect(asked < highest || (asked == highest && !received.contains(asked)))
                            #expect(!received.contains(asked), "asked for frame \(asked), which came")
                            #expect(time <= Int64(asked) * Self.f + 60 * Self.ms - 32 * Self.ms)
                        }
                        // Half the time the answer comes (a resend, or the frame late): never asked again.
                        if let answered = request.sequences.randomElement(using: &random), Bool.random(using: &random) {
                            gaps.received(Self.frame(answered))
                            received.insert(answered)
                        }
                    }
                }
            }
        }
    }

    @Test("the frames found missing are counted, and told to the DJ once each in the next heartbeat")
    func lostFramesAreTold() throws {
        var gaps = LiveGapTracker()
        for n: UInt64 in [10, 12, 15] { gaps.received(Self.frame(n)) }
        #expect(gaps.lost == 3, "11, 13 and 14")
        gaps.received(Self.frame(11))  // overtaken, not lost: still found missing when 12 came
        #expect(gaps.lost == 3 && gaps.takeLost() == 3 && gaps.takeLost() == 0 && gaps.lost == 3)
        gaps.received(Self.frame(17))
        #expect(gaps.takeLost() == 1)
        // On the wire: flags bit 1 and a u16 count, before the cookie; none at all without a loss.
        var beat = ByteWriter()
        Heartbeat(liveLost: 3).encode(into: &beat)
        #expect(beat.bytes == [2, 0, 3])
        beat = ByteWriter()
        Heartbeat(wantsUnicast: true, cookie: 9, liveLost: 3).encode(into: &beat)
        #expect(beat.bytes == [3, 0, 3, 0, 0, 0, 0, 0, 0, 0, 9])
        var reader = ByteReader(beat.bytes)
        #expect(try Heartbeat(from: &reader) == Heartbeat(wantsUnicast: true, cookie: 9, liveLost: 3))
        beat = ByteWriter()
        Heartbeat(liveLost: 0).encode(into: &beat)
        #expect(beat.bytes.isEmpty)
        reader = ByteReader([2, 0])
        #expect(throws: WireError.self) { try Heartbeat(from: &reader) }
        // On a hello bit 1 is reserved: ignored, no count read.
        var hello = ByteWriter()
        Hello(listenerName: "a").encode(into: &hello)
        reader = ByteReader(hello.bytes + [2])
        #expect(try Hello(from: &reader) == Hello(listenerName: "a"))
    }

    @Test("a jump wider than a request's span (a new stream) asks for nothing")
    func newStreamIsNoGap() {
        var gaps = LiveGapTracker()
        gaps.received(Self.frame(100))
        gaps.received(Self.frame(100 + UInt64(LiveResend.span) + 1))
        #expect(gaps.missingCount == 0)
    }

    @Test("the DJ sends again what it sent within 500 ms, nothing older, nothing it never sent")
    func senderKeepsHalfASecond() {
        var sender = LiveSender(settings: .init(parityCount: 1), code: LiveJitterBufferTests.XORCode())
        for n in UInt64(0)..<100 { _ = sender.send(Self.frame(n)) }
        #expect(sender.resend([99, 50, 51]).map(\.sequence) == [99, 50, 51])
        #expect(sender.resend([49, 100, 7]).isEmpty, "49 is 510 ms old; 100 and 7 were not kept or never sent")
        #expect(sender.framesResent == 3 && sender.resendsMissed == 3)
    }

    @Test("each listener gets 32 frames at once and 50 a second after that; another listener its own")
    func budgetPerListener() {
        var budget = LiveResendBudget()
        let a = PublicKey(bytes: [UInt8](repeating: 1, count: 32))!
        let b = PublicKey(bytes: [UInt8](repeating: 2, count: 32))!
        #expect(budget.take(40, for: a, nowNs: 0) == 32)
        #expect(budget.take(1, for: a, nowNs: 0) == 0)
        #expect(budget.take(32, for: b, nowNs: 0) == 32)
        #expect(budget.take(10, for: a, nowNs: 100 * Self.ms) == 5, "0.1 s is 5 frames")
        #expect(budget.take(100, for: a, nowNs: 10_000 * Self.ms) == 32, "never more than the burst")
        #expect(budget.refused == 8 + 1 + 5 + 68)
        budget.prune { $0 == b }
        #expect(budget.take(32, for: a, nowNs: 10_000 * Self.ms) == 32, "a pruned listener starts full again")
    }
}

import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// The DJ's side of the live carrier (docs/LIVE.md): what `--live` accepts, how frames are
/// numbered and timed as they are read, the blocks' repairs, and the DJ machine sending them.
@Suite struct LiveSenderTests {
    typealias XORCode = LiveJitterBufferTests.XORCode
    static let f = LiveFrameDuration.ms10.ns

    // MARK: --live

    @Test("--live takes pipe:PATH, pipe:PATH?sampleformat=48000:16:2 and - (stdin)")
    func parsesSources() throws {
        #expect(try LiveSource.parse("pipe:/tmp/snapfifo") == .pipe(path: "/tmp/snapfifo", format: .station))
        #expect(
            try LiveSource.parse("pipe:/run/a b?sampleformat=48000:16:2")
                == .pipe(path: "/run/a b", format: LiveSampleFormat(rate: 48_000, bits: 16, channels: 2)))
        #expect(try LiveSource.parse("-") == .standardInput(format: .station))
        #expect(try LiveSource.parse("-?sampleformat=48000:16:2") == .standardInput(format: .station))
        #expect(LiveSampleFormat.station.bytesPerFrame == 4)
    }

    @Test("a sample format that is not the station's is refused, naming both")
    func refusesOtherFormats() {
        for (given, shown) in [
            ("44100:16:2", "44100:16:2"), ("48000:24:2", "48000:24:2"), ("48000:16:1", "48000:16:1"),
        ] {
            #expect {
                try LiveSource.parse("pipe:/tmp/f?sampleformat=\(given)")
            } throws: { error in
                let text = (error as? LiveSource.Invalid)?.description ?? ""
                return text.contains(shown) && text.contains("48000:16:2")
            }
        }
    }

    @Test(
        "bad --live values are refused with a sentence",
        arguments: [
            "", "pipe:", "file:/tmp/x", "pipe:/tmp/x?rate=48000", "pipe:/tmp/x?sampleformat=48000:16",
            "pipe:/tmp/x?sampleformat=a:b:c", "pulse:", "pulse:a b", "pulse?sampleformat=48000:16:2", "/tmp/fifo",
            "pulseaudio",
        ])
    func refusesBadValues(_ value: String) {
        #expect(throws: LiveSource.Invalid.self) { try LiveSource.parse(value) }
    }

    // MARK: Stamps

    @Test("frames read on time, with jitter, follow each other: numbers by one, times by the frame length")
    func onTimeFramesFollowEachOther() {
        var stamper = LiveStamper(duration: .ms10)
        let start: Int64 = 1_700_000_000_000_000_000
        var generator = SplitMix64(seed: 7)
        var stamps: [(sequence: UInt64, firstSample: DJTime)] = []
        for n in 1...500 {
            // Each read happens when its last sample is due, up to 15 ms late.
            let jitter = Int64(generator.next() % 15_000_000)
            stamps.append(stamper.stamp(readAt: DJTime(ns: start + Int64(n) * Self.f + jitter), realTimeNs: start))
        }
        #expect(stamps[0].sequence == UInt64(start / 2_500_000), "a stream's first number is real time in 2.5 ms")
        #expect(stamps[0].firstSample.ns >= start && stamps[0].firstSample.ns < start + 15_000_000)
        for (previous, next) in zip(stamps, stamps.dropFirst()) {
            #expect(next.sequence == previous.sequence + 1)
            #expect(next.firstSample.ns - previous.firstSample.ns == Self.f)
        }
    }

    @Test("a read late by more than the slip skips frames so the stamps stay on the capture's time")
    func slipSkipsFrames() {
        var stamper = LiveStamper(duration: .ms10)
        let start: Int64 = 1_000_000_000_000
        let first = stamper.stamp(readAt: DJTime(ns: start), realTimeNs: start)
        let next = stamper.stamp(readAt: DJTime(ns: start + Self.f + 55_000_000), realTimeNs: start)
        // 55 ms late: five whole frames skipped; number and time still agree.
        #expect(next.sequence == first.sequence + 6)
        #expect(next.firstSample.ns == first.firstSample.ns + 6 * Self.f)
        #expect(next.firstSample.ns <= start + Self.f + 55_000_000 - Self.f, "never stamped after its read")
    }

    @Test("a capture that was late itself (the writer's audio waits in the pipe behind the frame) skips nothing")
    func lateCaptureWithBacklog() {
        var stamper = LiveStamper(duration: .ms10)
        let start: Int64 = 1_000_000_000_000
        let first = stamper.stamp(readAt: DJTime(ns: start), realTimeNs: start)
        // Read 55 ms late, with 55 ms of audio already written after it: the writer was on time.
        let late = stamper.stamp(
            readAt: DJTime(ns: start + Self.f + 55_000_000), backlogNs: 55_000_000, realTimeNs: start)
        #expect(late.sequence == first.sequence + 1 && late.firstSample.ns == first.firstSample.ns + Self.f)
        // The frames behind it, read at once, follow it.
        let next = stamper.stamp(
            readAt: DJTime(ns: start + Self.f + 55_100_000), backlogNs: 45_000_000, realTimeNs: start)
        #expect(next.sequence == first.sequence + 2 && next.firstSample.ns == first.firstSample.ns + 2 * Self.f)
        // A stream's first frame starts one frame before its audio was written.
        var fresh = LiveStamper(duration: .ms10)
        #expect(
            fresh.stamp(readAt: DJTime(ns: start), backlogNs: 30_000_000, realTimeNs: start).firstSample.ns
                == start - 30_000_000 - Self.f)
    }

    @Test("a source back after a gap starts a new stream at its read, numbered above the last")
    func gapStartsANewStream() {
        var stamper = LiveStamper(duration: .ms10)
        let start: Int64 = 1_000_000_000_000
        let first = stamper.stamp(readAt: DJTime(ns: start), realTimeNs: start)
        let back = start + Nanos.seconds(3)
        let next = stamper.stamp(readAt: DJTime(ns: back), realTimeNs: start + Nanos.seconds(3))
        #expect(next.firstSample.ns == back - Self.f && next.sequence > first.sequence)
        #expect(next.sequence == UInt64((start + Nanos.seconds(3)) / 2_500_000))
        // A real-time clock that went back still numbers above the last frame.
        var clockBack = LiveStamper(duration: .ms10)
        let a = clockBack.stamp(readAt: DJTime(ns: start), realTimeNs: start)
        clockBack.interrupt()
        let b = clockBack.stamp(readAt: DJTime(ns: start + 20_000_000), realTimeNs: start - Nanos.seconds(60))
        #expect(b.sequence == a.sequence + 1)
        #expect(b.firstSample.ns == start + 20_000_000 - Self.f, "an interrupted stream restarts at its read")
    }

    @Test("a source faster than real time is read no sooner than the next frame's last sample")
    func pacing() {
        var stamper = LiveStamper(duration: .ms20)
        #expect(stamper.nextReadNotBefore == nil)
        let first = stamper.stamp(readAt: DJTime(ns: 1_000_000_000), realTimeNs: 1_000_000_000)
        #expect(stamper.nextReadNotBefore == DJTime(ns: first.firstSample.ns + 2 * LiveFrameDuration.ms20.ns))
        stamper.interrupt()
        #expect(stamper.nextReadNotBefore == nil)
    }

    // MARK: Blocks

    static func frame(_ sequence: UInt64, bytes: Int = 3) -> LiveFrame {
        LiveFrame(
            sequence: sequence, firstSample: DJTime(ns: Int64(sequence) * f), duration: .ms10,
            payload: (0..<bytes).map { UInt8(truncatingIfNeeded: Int(sequence) &* 7 &+ $0) })
    }

    @Test("the default block is 4 frames and 2 repairs at 10 ms and 60 ms; k shrinks with the delay")
    func blockSize() {
        let settings = LiveSender.Settings()
        #expect(settings.dataCount == 4 && settings.parityCount == 2)
        #expect(LiveSender.Settings(delayMs: 30).dataCount == 1)
        #expect(LiveSender.Settings(delayMs: 200).dataCount == 16)
        #expect(LiveSender.Settings(duration: .ms20).dataCount == 2)
    }

    @Test("every frame the DJ sends says the station's delay, whatever the capture stamped; a rebuilt one too")
    func framesCarryTheStationDelay() throws {
        var sender = LiveSender(settings: .init(delayMs: 130, parityCount: 1, protection: .always), code: XORCode())
        var captured = Self.frame(0)
        captured.delayMs = 999
        let out = sender.send(captured) + sender.send(Self.frame(1)) + sender.flush()
        let frames = out.compactMap { if case .liveFrame(let f) = $0 { f } else { nil } }
        #expect(frames.map(\.delayMs) == [130, 130])
        // A frame lost and rebuilt from its block's repair is heard at the same delay.
        let repair = try #require(out.compactMap { if case .liveRepair(let r) = $0 { r } else { nil } }.first)
        var buffer = LiveJitterBuffer(settings: .init(delayNs: Nanos.ms(130)), code: XORCode())
        _ = buffer.insert(frames[0], now: DJTime(ns: 0))
        _ = buffer.insert(repair, now: DJTime(ns: 0))
        let decisions = [buffer.next(at: DJTime(ns: Nanos.ms(200))), buffer.next(at: DJTime(ns: Nanos.ms(200)))]
        let rebuilt = decisions.compactMap { if case .recovered(let frame)? = $0 { frame } else { nil } }
        #expect(rebuilt.map(\.sequence) == [1] && rebuilt.map(\.delayMs) == [130])
        // Out of range, it is kept to what the wire can carry.
        #expect(LiveSender.Settings(delayMs: 0).delayMs == 1 && LiveSender.Settings(delayMs: 9000).delayMs == 5000)
    }

    @Test("every frame goes out at once; after every k in a row, the block's repairs, which rebuild a lost frame")
    func framesThenRepairs() {
        var sender = LiveSender(settings: .init(parityCount: 1, protection: .always), code: XORCode())
        var out: [Message] = []
        for n in UInt64(100)..<108 { out += sender.send(Self.frame(n, bytes: Int(n % 5) + 1)) }
        let kinds = out.map { if case .liveFrame = $0 { "f" } else { "r" } }.joined()
        #expect(kinds == "ffffrffffr")
        let repairs = out.compactMap { if case .liveRepair(let r) = $0 { r } else { nil } }
        #expect(repairs.map(\.firstSequence) == [100, 104])
        #expect(repairs.allSatisfy { $0.dataCount == 4 && $0.parityCount == 1 })
        // The repair and three of the frames give back the fourth whole.
        let frames = (100..<104).map { Self.frame(UInt64($0), bytes: $0 % 5 + 1) }
        let length = repairs[0].shard.count
        var shards: [[UInt8]?] = frames.map { LiveFEC.shard(of: $0, length: length) }
        shards[2] = nil
        let back = XORCode().recover(shards + [repairs[0].shard], dataCount: 4)
        #expect(back.flatMap { LiveFEC.frame(fromShard: $0[2], sequence: 102) } == frames[2])
    }

    @Test("a jump in the numbers or a silence closes the block short; no repair covers a frame not sent")
    func shortBlocks() {
        var sender = LiveSender(settings: .init(parityCount: 1, protection: .always), code: XORCode())
        var out = sender.send(Self.frame(10)) + sender.send(Self.frame(11))
        out += sender.send(Self.frame(15))  // frames 12-14 skipped (a slip)
        out += sender.flush() + sender.flush()
        let repairs = out.compactMap { if case .liveRepair(let r) = $0 { r } else { nil } }
        #expect(repairs.map(\.sequences) == [10...11, 15...15])
        let sent = Set(out.compactMap { if case .liveFrame(let f) = $0 { f.sequence } else { nil } })
        #expect(repairs.allSatisfy { $0.sequences.allSatisfy(sent.contains) })
        #expect(sender.shortBlocks == 2 && sender.framesSent == 3 && sender.repairsSent == 2)
    }

    @Test("by default repairs go out only after a listener reported lost frames, for the next 10 s of the stream")
    func repairsWhileFramesAreLost() {
        var sender = LiveSender(settings: .init(parityCount: 1), code: XORCode())
        #expect(sender.settings.protection == .onLoss)
        func kinds(_ range: Range<UInt64>) -> String {
            range.flatMap { sender.send(Self.frame($0)) }.map { if case .liveFrame = $0 { "f" } else { "r" } }.joined()
        }
        // A clean link: the frames alone.
        #expect(kinds(0..<8) == "ffffffff")
        #expect(sender.repairsSent == 0 && sender.blocksUnprotected == 2)
        // A loss reported while frame 7 (stamped 70 ms) was the newest: every block whose last frame
        // is stamped before 70 ms + 10 s gets its repair.
        sender.lossReported()
        #expect(kinds(8..<12) == "ffffr")
        let holdEnd = UInt64((70_000_000 + LiveSender.lossHoldNs) / Self.f)  // frame 1007
        #expect(kinds(12..<holdEnd - 3).filter { $0 == "r" }.count == Int(holdEnd - 3 - 12) / 4)
        // The block of 1004-1007 ends at 10.07 s: past the hold, so it goes bare, and so do the next.
        #expect(kinds(holdEnd - 3..<holdEnd + 9) == String(repeating: "f", count: 12))
        #expect(sender.lossReports == 1)
        // A report before any frame holds nothing (there was nothing to lose).
        var fresh = LiveSender(settings: .init(parityCount: 1), code: XORCode())
        fresh.lossReported()
        #expect((0..<4).flatMap { fresh.send(Self.frame($0)) }.count == 4)
    }

    @Test("numbers the DJ skipped are no loss: a count they explain, or a resend of them, starts no repairs")
    func skipsAreNoLoss() {
        var sender = LiveSender(settings: .init(parityCount: 1), code: XORCode())
        var out = (0..<4).flatMap { sender.send(Self.frame($0)) }
        out += (7..<15).flatMap { sender.send(Self.frame($0)) }  // the capture slipped: 4, 5 and 6 never sent
        #expect(sender.resend([5, 6]).isEmpty)
        sender.lossReported(count: 3)
        out += (15..<23).flatMap { sender.send(Self.frame($0)) }
        #expect(!out.contains { if case .liveRepair = $0 { true } else { false } })
        #expect(sender.lossReports == 0 && sender.lossReportsExplained == 1)
        // One more than the skips is a loss; so is a resend of a frame that was sent.
        sender.lossReported(count: 4)
        #expect((23..<27).flatMap { sender.send(Self.frame($0)) }.count == 5)
        // Skips are remembered 2.5 s of the stream: after that the same count is a loss.
        var later = LiveSender(settings: .init(parityCount: 1), code: XORCode())
        _ = (0..<4).flatMap { later.send(Self.frame($0)) } + (7..<300).flatMap { later.send(Self.frame($0)) }
        later.lossReported(count: 3)
        #expect(later.lossReports == 1 && later.lossReportsExplained == 0)
        var other = LiveSender(settings: .init(parityCount: 1), code: XORCode())
        _ = (0..<4).flatMap { other.send(Self.frame($0)) }
        #expect(other.resend([2]) == [Self.frame(2)] && other.lossReports == 1)
        // A new stream (a jump wider than a resend request) is no skip: it explains nothing.
        var restarted = LiveSender(settings: .init(parityCount: 1), code: XORCode())
        _ = restarted.send(Self.frame(0)) + restarted.send(Self.frame(1_000))
        restarted.lossReported(count: 1)
        #expect(restarted.lossReports == 1)
    }

    // MARK: The DJ machine

    func liveDJ(playsLive: Bool = false, protection: LiveSender.Protection = .always) -> DJMachine {
        var configuration = Fixture.djConfiguration(queue: [.live], playsAudio: false)
        configuration.live = LiveSender.Settings(parityCount: 1, protection: protection)
        configuration.playsLive = playsLive
        var dj = DJMachine(configuration: configuration, verifier: ChecksumVerifier(), now: t0, erasureCode: XORCode())
        _ = dj.handle(.start, at: t0)
        return dj
    }

    @Test("a live DJ sends each frame to the group, then the block's repairs; its now playing is Live")
    func djSendsFramesToTheGroup() {
        var dj = liveDJ()
        var sent: [Sent] = []
        for n in UInt64(0)..<4 { sent += dj.handle(.live(.frame(Self.frame(n))), at: at(ms: 10 * Int64(n) + 10)).sent }
        let live = sent.filter {
            switch $0.message {
            case .liveFrame, .liveRepair: true
            default: false
            }
        }
        #expect(live.count == 5)
        #expect(
            live.allSatisfy { $0.to == .group(Fixture.stationID.multicastGroup) && $0.station == Fixture.stationID })
        #expect(dj.engine.nowPlaying?.title == "Live" && dj.engine.nowPlaying?.isLive == true)
        #expect(dj.engine.snapshot(now: DJTime(onTheDJ: at(ms: 60))).nowPlaying == .live)
    }

    @Test(
        "a DJ with speakers hands every frame and repair it sends to its own live output; with --no-audio none",
        arguments: [true, false])
    func djPlaysWhatItSends(playsLive: Bool) {
        var dj = liveDJ(playsLive: playsLive)
        var group: [Message] = []
        var played: [Message] = []
        for n in UInt64(0)..<4 {
            for effect in dj.handle(.live(.frame(Self.frame(n))), at: at(ms: 10 * Int64(n) + 10)) {
                switch effect {
                case .send(let message, to: .group, station: _): group.append(message)
                case .live(.frame(let frame)): played.append(.liveFrame(frame))
                case .live(.repair(let repair)): played.append(.liveRepair(repair))
                default: break
                }
            }
        }
        let live = group.filter {
            switch $0 {
            case .liveFrame, .liveRepair: true
            default: false
            }
        }
        #expect(live.count == 5)
        // What the room gets, the DJ's speakers get: the same frames and repairs, in the same order.
        #expect(played == (playsLive ? live : []))
    }

    @Test("a listener's resend request gets the frames it names by unicast; a sender not listening gets nothing")
    func resendRequests() throws {
        var dj = liveDJ()
        let id = Fixture.stationID
        for n in UInt64(0)..<8 { _ = dj.handle(.live(.frame(Self.frame(n))), at: at(ms: 10 * Int64(n) + 10)) }
        var listener = Peer("10.0.0.7", key: 7)
        var stranger = Peer("10.0.0.8", key: 8)
        _ = dj.handle(listener.send(.hello(Hello(listenerName: "kitchen")), station: id), at: at(ms: 90))
        let request = LiveResend.asking(for: [3, 5, 6])[0]
        let answer = dj.handle(listener.send(.liveResend(request), station: id), at: at(ms: 95)).sent
        let resent = answer.compactMap { if case .liveFrame(let frame) = $0.message { frame } else { nil } }
        #expect(resent == [Self.frame(3), Self.frame(5), Self.frame(6)])
        #expect(answer.allSatisfy { $0.to == .peer(listener.address) }, "to the asker alone")
        let none = dj.handle(stranger.send(.liveResend(request), station: id), at: at(ms: 96)).sent
        #expect(none.isEmpty, "not listening: not answered")
        #expect(dj.resendsIgnored == 1 && dj.live?.framesResent == 3)
        // live_sent: 8 frames, a repair per block of 4 (m = 1), 3 resent, 1 request ignored, and
        // a datagram that is not the station's own dropped.
        _ = dj.handle(.datagram([0x50, 0x52, 1], from: listener.address, machine: nil), at: at(ms: 97))
        let sent = try #require(dj.liveSent)
        #expect(sent.frames == 8 && sent.repairs == 2 && sent.shortBlocks == 0 && sent.resent == 3)
        #expect(sent.resendsMissed == 0 && sent.resendsOverBudget == 0 && sent.resendsIgnored == 1)
        #expect(sent.dropped.total == 1)
    }

    @Test("a live DJ sends repairs once a listener's heartbeat counts lost frames, or a listener asks for one again")
    func lossReportsStartTheRepairs() throws {
        let id = Fixture.stationID
        func repairs(_ dj: inout DJMachine, _ range: Range<UInt64>) -> Int {
            range.flatMap { dj.handle(.live(.frame(Self.frame($0))), at: at(ms: 10 * Int64($0) + 10)).sent }
                .filter { if case .liveRepair = $0.message { true } else { false } }.count
        }
        for report in ["heartbeat", "resend"] {
            var dj = liveDJ(protection: .onLoss)
            var listener = Peer("10.0.0.7", key: 7)
            _ = dj.handle(listener.send(.hello(Hello(listenerName: "kitchen")), station: id), at: at(ms: 5))
            _ = dj.handle(listener.send(.heartbeat(Heartbeat()), station: id), at: at(ms: 6))
            #expect(repairs(&dj, 0..<8) == 0, "a clean link: no repairs")
            let message: Message =
                report == "heartbeat"
                ? .heartbeat(Heartbeat(liveLost: 2)) : .liveResend(LiveResend.asking(for: [6])[0])
            _ = dj.handle(listener.send(message, station: id), at: at(ms: 90))
            #expect(repairs(&dj, 8..<16) == 2, "\(report): a repair a block")
            let sent = try #require(dj.liveSent)
            #expect(sent.unprotectedBlocks == 2 && sent.lossReports == 1 && sent.repairs == 2)
        }
    }

    @Test("a source gone silent closes its block and is told once; a frame after it, back on air")
    func silence() {
        var dj = liveDJ()
        _ = dj.handle(.live(.frame(Self.frame(0))), at: at(ms: 10))
        let silent = dj.handle(.live(.silent("the live pipe's writer closed /tmp/f.")), at: at(ms: 20))
        #expect(
            silent.sent.contains { if case .liveRepair(let r) = $0.message { r.sequences == 0...0 } else { false } })
        #expect(silent.reports.contains { if case .warning(let text) = $0 { text.contains("silent") } else { false } })
        let again = dj.handle(.live(.silent("the live pipe's writer closed /tmp/f.")), at: at(ms: 30))
        #expect(
            again.reports.isEmpty
                && again.sent.filter { if case .liveRepair = $0.message { true } else { false } }.isEmpty)
        let back = dj.handle(.live(.frame(Self.frame(900))), at: at(ms: 900))
        #expect(back.reports.contains { if case .notice(let text) = $0 { text.contains("back") } else { false } })
        #expect(!dj.isFinished)
    }

    @Test("a source that cannot be read stops the station with its error")
    func failure() {
        var dj = liveDJ()
        _ = dj.handle(.live(.failed(NodeError(.usage, "no encoder"))), at: at(ms: 10))
        #expect(dj.isFinished && dj.exitError?.description == "no encoder")
    }

    @Test("a DJ that is not live ignores live input")
    func notLive() {
        var dj = DJMachine(configuration: Fixture.djConfiguration(), verifier: ChecksumVerifier(), now: t0)
        _ = dj.handle(.start, at: t0)
        let out = dj.handle(.live(.frame(Self.frame(0))), at: at(ms: 10))
        #expect(!out.sent.contains { if case .liveFrame = $0.message { true } else { false } })
    }
}

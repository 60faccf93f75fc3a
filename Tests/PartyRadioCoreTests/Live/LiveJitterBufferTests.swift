import NodeTestSupport
import PartyRadioCore
import Testing

/// The live jitter buffer (docs/LIVE.md): a stream of frames and repairs through loss,
/// duplication, reordering and lateness, with the playout rule restated here on its own: the
/// frame numbered n, first sample at T(n) = T0 + n·f, plays at T(n) + delay; each number is given
/// out once, in order, at or after its time; what arrived in time is played, what its block can
/// rebuild is recovered (byte for byte the frame sent), the rest concealed, and the counts add up.
private let slot: Int64 = 10_000_000
private let liveDelay: Int64 = 60_000_000
private let liveStart = DJTime(ns: 1_765_000_000_000_000_000)
private let firstNumber: UInt64 = 1_000

private func makeFrame(_ n: UInt64) -> LiveFrame {
    LiveFrame(
        sequence: firstNumber + n, firstSample: liveStart + Int64(n) * slot, duration: .ms10,
        payload: (0..<(Int(n % 7) + 1)).map { UInt8(truncatingIfNeeded: Int(n) &* 31 &+ $0) })
}

@Suite struct LiveJitterBufferTests {
    /// The tests' erasure code (one XOR parity shard), shared with the simulation.
    typealias XORCode = NodeTestSupport.XORCode

    /// One arrival: a frame or a repair, at a station time.
    enum Item {
        case frame(LiveFrame)
        case repair(LiveRepair)
    }

    /// Runs `arrivals` (sorted by time) through a buffer asking for playout every millisecond, and
    /// checks the rule for frames 0 ..< count; returns the decisions and counters.
    static func run(
        _ arrivals: [(at: DJTime, item: Item)], count: Int, sent: [UInt64: LiveFrame]
    ) -> (decisions: [LivePlayout], counters: LiveCounters) {
        var buffer = LiveJitterBuffer(settings: .init(delayNs: liveDelay), code: XORCode())
        var decisions: [LivePlayout] = []
        var pending = arrivals[...]
        var now = liveStart
        let end = liveStart + Int64(count) * slot + liveDelay
        while now < end {
            while let next = pending.first, next.at <= now {
                pending.removeFirst()
                switch next.item {
                case .frame(let frame): buffer.insert(frame, now: now)
                case .repair(let repair): buffer.insert(repair, now: now)
                }
            }
            while let decision = buffer.next(at: now) {
                // Given out at or after its time, never before.
                let n = decision.sequence - firstNumber
                #expect(liveStart + Int64(n) * slot + liveDelay <= now, "frame \(n) given out early")
                decisions.append(decision)
            }
            now = now + 1_000_000
        }
        // Each number once, in order, none skipped.
        #expect(decisions.map(\.sequence) == (0..<UInt64(count)).map { firstNumber + $0 })
        for decision in decisions {
            let expected = makeFrame(decision.sequence - firstNumber)
            #expect(decision.firstSample == expected.firstSample && decision.duration == .ms10)
            switch decision {
            case .play(let frame), .recovered(let frame): #expect(frame == sent[frame.sequence])
            case .conceal: break
            }
        }
        let counters = buffer.counters
        #expect(counters.released == decisions.count)
        #expect(counters.played == decisions.filter { if case .play = $0 { true } else { false } }.count)
        #expect(counters.recovered == decisions.filter { if case .recovered = $0 { true } else { false } }.count)
        return (decisions, counters)
    }

    static func sentFrames(_ count: Int) -> [UInt64: LiveFrame] {
        Dictionary(uniqueKeysWithValues: (0..<UInt64(count)).map { (firstNumber + $0, makeFrame($0)) })
    }

    @Test func inOrderEveryFramePlaysAtItsTime() {
        let count = 50
        let arrivals = (0..<UInt64(count)).map { n in
            (at: liveStart + Int64(n) * slot + slot + 2_000_000, item: Item.frame(makeFrame(n)))
        }
        let (decisions, counters) = Self.run(arrivals, count: count, sent: Self.sentFrames(count))
        #expect(decisions.allSatisfy { if case .play = $0 { true } else { false } })
        #expect(counters.concealed == 0 && counters.late == 0)
    }

    @Test func reorderedAndDuplicatedFramesPlayOnceEach() {
        let count = 60
        var random = SplitMix64(seed: 7)
        var arrivals: [(at: DJTime, item: Item)] = []
        for n in 0..<UInt64(count) {
            // Jitter up to 30 ms, well inside the 60 ms liveDelay; every third frame twice.
            let at = liveStart + Int64(n) * slot + slot + Int64(random.next() % 30_000_000)
            arrivals.append((at, .frame(makeFrame(n))))
            if n % 3 == 0 { arrivals.append((at + 5_000_000, .frame(makeFrame(n)))) }
        }
        arrivals.sort { $0.at < $1.at }
        // The firstNumber frame to arrive may not be frame 0; the buffer starts at the earliest seen
        // before anything plays, so every frame still plays.
        let (decisions, counters) = Self.run(arrivals, count: count, sent: Self.sentFrames(count))
        #expect(decisions.allSatisfy { if case .play = $0 { true } else { false } })
        #expect(counters.duplicate == count / 3)
        #expect(counters.received == count + count / 3)
    }

    @Test func lostFramesAreRecoveredFromTheirBlockOrConcealed() {
        let count = 40  // ten blocks of four
        let lost: Set<UInt64> = [1, 9, 10, 22]  // block 2 loses two: one concealed there
        var arrivals: [(at: DJTime, item: Item)] = []
        for n in 0..<UInt64(count) where !lost.contains(n) {
            arrivals.append((liveStart + Int64(n) * slot + slot + 2_000_000, .frame(makeFrame(n))))
        }
        for block in stride(from: UInt64(0), to: UInt64(count), by: 4) {
            let repairs = LiveFEC.repairs(for: (block..<block + 4).map(makeFrame), parityCount: 1, code: XORCode())
            // Sent after the block's last frame is complete.
            arrivals.append((liveStart + Int64(block + 4) * slot + 3_000_000, .repair(repairs[0])))
        }
        arrivals.sort { $0.at < $1.at }
        let (decisions, counters) = Self.run(arrivals, count: count, sent: Self.sentFrames(count))
        for decision in decisions {
            let n = decision.sequence - firstNumber
            switch decision {
            case .play: #expect(!lost.contains(n))
            case .recovered: #expect(lost.contains(n) && ![9, 10].contains(n))
            case .conceal: #expect(n == 9 || n == 10)
            }
        }
        #expect(counters.recovered == 2 && counters.concealed == 2 && counters.undecodableBlocks == 1)
    }

    @Test func lateFramesAreDroppedAndCounted() {
        let count = 20
        var arrivals: [(at: DJTime, item: Item)] = []
        for n in 0..<UInt64(count) {
            // Frame 5 arrives 100 ms after its time: past its playout.
            let extra: Int64 = n == 5 ? 100_000_000 : 0
            arrivals.append((liveStart + Int64(n) * slot + slot + 2_000_000 + extra, .frame(makeFrame(n))))
        }
        arrivals.sort { $0.at < $1.at }
        let (decisions, counters) = Self.run(arrivals, count: count, sent: Self.sentFrames(count))
        #expect(counters.late == 1 && counters.concealed == 1)
        guard case .conceal = decisions[5] else {
            Issue.record("frame 5 was \(decisions[5])")
            return
        }
    }

    @Test func randomLossJitterAndDuplicationKeepTheRule() {
        for seed in 0..<40 as Range<UInt64> {
            var random = SplitMix64(seed: seed)
            let count = 80
            // Frame 0 arrives first and in time (it starts the stream); the others with 10 % loss,
            // up to 50 ms of jitter (in time for the 60 ms delay) and one in eight twice.
            var arrivals: [(at: DJTime, item: Item)] = [(liveStart + slot, .frame(makeFrame(0)))]
            var arrived: [UInt64: DJTime] = [0: liveStart + slot]
            for n in 1..<UInt64(count) where random.next() % 10 != 0 {
                let at = liveStart + Int64(n) * slot + slot + Int64(random.next() % 50_000_000)
                arrivals.append((at, .frame(makeFrame(n))))
                arrived[n] = at
                if random.next() % 8 == 0 {
                    arrivals.append((at + Int64(random.next() % 5_000_000), .frame(makeFrame(n))))
                }
            }
            for block in stride(from: UInt64(0), to: UInt64(count), by: 4) where random.next() % 10 != 0 {
                let repairs = LiveFEC.repairs(for: (block..<block + 4).map(makeFrame), parityCount: 1, code: XORCode())
                arrivals.append(
                    (liveStart + Int64(block + 4) * slot + Int64(random.next() % 40_000_000), .repair(repairs[0])))
            }
            arrivals.sort { $0.at < $1.at }
            let (decisions, counters) = Self.run(arrivals, count: count, sent: Self.sentFrames(count))
            #expect(counters.released == count, "seed \(seed)")
            // A frame that arrived before its time is played; one that did not is never "played".
            for decision in decisions {
                let n = decision.sequence - firstNumber
                let playsAt = liveStart + Int64(n) * slot + liveDelay
                if let at = arrived[n], at < playsAt {
                    #expect(decision == .play(makeFrame(n)), "seed \(seed) frame \(n)")
                } else if case .play = decision {
                    Issue.record("seed \(seed): frame \(n) played without arriving in time")
                }
            }
        }
    }

    @Test func aSilenceStopsTheBufferAndTheNextFramesStartItAgain() {
        var buffer = LiveJitterBuffer(settings: .init(delayNs: liveDelay), code: XORCode())
        buffer.insert(makeFrame(0), now: liveStart)
        var now = liveStart
        var decisions: [LivePlayout] = []
        while now < liveStart + 400_000_000 {
            while let decision = buffer.next(at: now) { decisions.append(decision) }
            now = now + 1_000_000
        }
        // One played, then 200 ms concealed (20 frames), then nothing.
        #expect(decisions.count == 21 && buffer.counters.underruns == 1 && buffer.nextDue == nil)
        // The DJ comes back 5 s later with new numbers: they play at their own times.
        let back = LiveFrame(
            sequence: 90_000, firstSample: liveStart + 5_000_000_000, duration: .ms10, payload: [1])
        #expect(buffer.insert(back, now: back.firstSample + 1_000_000) == .kept)
        #expect(buffer.next(at: back.firstSample + liveDelay - 1) == nil)
        #expect(buffer.next(at: back.firstSample + liveDelay) == .play(back))
    }

    /// Sequence numbers come from the network: a block that ends on the last number there is
    /// (its first number plus its k is one past UInt64's range, which the repair's parser allows)
    /// is kept and forgotten like any other, with no overflow trap.
    @Test func aBlockEndingOnTheLastSequenceNumberDoesNotTrap() {
        var buffer = LiveJitterBuffer(settings: .init(delayNs: liveDelay), code: XORCode())
        let first = UInt64.max - 3
        let frame = LiveFrame(sequence: first, firstSample: liveStart, duration: .ms10, payload: [1, 2, 3])
        #expect(buffer.insert(frame, now: liveStart) == .kept)
        let repair = LiveRepair(
            firstSequence: first, dataCount: 4, parityCount: 1, parityIndex: 0, shard: [0, 0, 0, 0])
        #expect(buffer.insert(repair, now: liveStart) == .kept)
        var now = liveStart
        var released = 0
        while now < liveStart + 200_000_000 {
            while buffer.next(at: now) != nil { released += 1 }
            now = now + 1_000_000
        }
        #expect(released >= 1)
    }
}

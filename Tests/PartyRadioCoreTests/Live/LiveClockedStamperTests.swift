import NodeTestSupport
import Testing

@testable import PartyRadioCore

/// `--live pulse` and `pulse:NAME`, and the stamps of a capture that runs on the source's clock.
@Suite struct LiveClockedStamperTests {
    static let f = LiveFrameDuration.ms10.ns
    static let start: Int64 = 1_700_000_000_000_000_000
    static let minimumLatencyNs: Int64 = 4_000_000

    @Test("--live pulse is the station's own sink (the default), pulse:NAME a source the server has")
    func parsesPulse() throws {
        #expect(try LiveSource.parse("pulse") == .stationSink)
        #expect(LiveSource.defaultSource == .stationSink)
        #expect(
            try LiveSource.parse("pulse:alsa_input.pci-0000_00_1f.3.analog-stereo")
                == .pulseSource("alsa_input.pci-0000_00_1f.3.analog-stereo"))
        #expect(try LiveSource.parse("pulse:party.monitor") == .pulseSource("party.monitor"))
        #expect(try LiveSource.parse("pulse").isPulse && !(try LiveSource.parse("-").isPulse))
        #expect(try LiveSource.parse("pulse:x").format == .station)
    }

    @Test("the station's sink is named after the station, the same every run, a PulseAudio identifier")
    func sinkNames() {
        #expect(LiveSource.pulseSinkName(station: "Rooftop") == "partyradio_rooftop")
        #expect(LiveSource.pulseSinkName(station: "Live Party!") == "partyradio_live_party")
        #expect(LiveSource.pulseSinkName(station: "  Café  del Mar ") == "partyradio_caf_del_mar")
        #expect(LiveSource.pulseSinkName(station: "🎉🎉") == "partyradio_station")
        #expect(LiveSource.pulseSinkName(station: String(repeating: "a", count: 60)).count == 48)
        #expect(LiveSource.pulseSinkDescription(station: "Bob's \"Party\"") == "Party Radio: Bobs Party")
    }

    /// Frames captured every f by a source whose clock runs `ppm` off the station's, read in bursts
    /// of `burst` frames, ``minimumLatencyNs`` and up to `jitterNs` after the last one's capture (a
    /// fragment reaches the reader only after its last sample was captured and sent), the server's
    /// latency reported with `noiseNs` of error (less than the minimum). Returns (read, latency,
    /// capture of the frame's first sample) per frame.
    static func reads(
        count: Int, ppm: Int64 = 0, burst: Int = 1, jitterNs: Int64 = 0, noiseNs: Int64 = 0, seed: UInt64 = 1,
        stall: (at: Int, ns: Int64)? = nil
    ) -> [(read: Int64, latency: Int64, first: Int64)] {
        var generator = SplitMix64(seed: seed)
        var out: [(Int64, Int64, Int64)] = []
        var readAt: Int64 = 0
        var lost: Int64 = 0
        for n in 0..<count {
            if let stall, n == stall.at { lost = stall.ns }  // the server dropped this much audio
            let first = start + lost + Int64(n) * (f + f * ppm / 1_000_000)
            let last = first + f
            if n % burst == 0 {
                let jitter = jitterNs > 0 ? Int64(generator.next() % UInt64(jitterNs)) : 0
                readAt = last + Int64(burst - 1) * f + Self.minimumLatencyNs + jitter
            }
            let noise = noiseNs > 0 ? Int64(generator.next() % UInt64(2 * noiseNs)) - noiseNs : 0
            out.append((readAt, readAt - last + noise, first))
        }
        return out
    }

    static func stamps(_ reads: [(read: Int64, latency: Int64, first: Int64)]) -> (
        stamps: [(sequence: UInt64, firstSample: DJTime, read: Int64, first: Int64)], dropped: Int
    ) {
        var stamper = LiveClockedStamper(duration: .ms10)
        var out: [(UInt64, DJTime, Int64, Int64)] = []
        for read in reads {
            if let stamp = stamper.stamp(readAt: DJTime(ns: read.read), latencyNs: read.latency, realTimeNs: start) {
                out.append((stamp.sequence, stamp.firstSample, read.read, read.first))
            }
        }
        return (out, stamper.dropped)
    }

    @Test(
        "stamps advance by exactly the frame length, are never in the future and stay near the capture",
        arguments: [
            (0, 1, 0, 0), (0, 4, 3_000_000, 2_000_000), (150, 2, 8_000_000, 1_000_000), (-150, 1, 0, 3_000_000),
            (-150, 4, 5_000_000, 3_000_000),
        ]
            as [(Int64, Int, Int64, Int64)])
    func stampsFollowTheSource(ppm: Int64, burst: Int, jitterNs: Int64, noiseNs: Int64) {
        for seed in 1...5 as ClosedRange<UInt64> {
            let (stamps, dropped) = Self.stamps(
                Self.reads(count: 30_000, ppm: ppm, burst: burst, jitterNs: jitterNs, noiseNs: noiseNs, seed: seed))
            #expect(stamps.count + dropped == 30_000)
            for (previous, next) in zip(stamps, stamps.dropFirst()) {
                #expect(next.sequence > previous.sequence)
                let steps = Int64(next.sequence - previous.sequence)
                #expect(next.firstSample.ns - previous.firstSample.ns == steps * Self.f, "times by whole frames")
            }
            for stamp in stamps {
                #expect(stamp.firstSample.ns + Self.f <= stamp.read, "a frame stamped after it was read")
                // The stamp's error against the true capture: within the slip and the latency's noise.
                let error = stamp.firstSample.ns - stamp.first
                #expect(abs(error) <= 20_000_000 + noiseNs + Self.f, "stamp \(error) ns off the capture")
            }
            // 300 s of audio 150 ppm off: 45 ms, a few frames skipped or dropped; none at 0 ppm.
            let skipped = Int(stamps.last!.sequence - stamps.first!.sequence) + 1 - stamps.count
            if ppm == 0 { #expect(skipped == 0 && dropped == 0, "skipped \(skipped), dropped \(dropped)") }
            if ppm > 0 {
                #expect(skipped >= 2 && skipped <= 6 && dropped == 0, "skipped \(skipped), dropped \(dropped)")
            }
            if ppm < 0 {
                #expect(dropped >= 2 && dropped <= 6 && skipped == 0, "skipped \(skipped), dropped \(dropped)")
            }
        }
    }

    @Test("a stall (audio the server dropped) skips whole frames, numbers and times together")
    func stallSkipsWholeFrames() {
        let (stamps, dropped) = Self.stamps(Self.reads(count: 300, stall: (at: 100, ns: 55_000_000)))
        #expect(dropped == 0)
        #expect(stamps.count == 300)
        let jump = stamps[100].sequence - stamps[99].sequence
        #expect(jump == 6, "55 ms lost is 5 frames skipped: \(jump)")
        #expect(stamps[100].firstSample.ns - stamps[99].firstSample.ns == 6 * Self.f)
        #expect(abs(stamps[100].firstSample.ns - stamps[100].first) < Self.f)
    }

    @Test("a capture late itself reads a larger latency and skips nothing")
    func lateCaptureSkipsNothing() {
        var reads = Self.reads(count: 200)
        // The thread slept 80 ms: eight frames read at once, each with the latency that says so.
        for n in 50..<58 {
            reads[n].read = reads[57].read + 80_000_000 - 70_000_000
            reads[n].latency = reads[n].read - (reads[n].first + Self.f)
        }
        let (stamps, dropped) = Self.stamps(reads)
        #expect(dropped == 0 && stamps.count == 200)
        #expect(stamps.last!.sequence - stamps.first!.sequence == 199)
    }

    @Test("a pause of the source starts a new stream, numbered above the last")
    func gapStartsANewStream() {
        let (stamps, _) = Self.stamps(Self.reads(count: 100, stall: (at: 50, ns: 300_000_000)))
        #expect(stamps[50].sequence > stamps[49].sequence)
        #expect(abs(stamps[50].firstSample.ns - stamps[50].first) < Self.f, "the new stream starts at its capture")
    }

    @Test("a latency the monitor reports as negative (not played yet) counts as none: never in the future")
    func negativeLatency() {
        var stamper = LiveClockedStamper(duration: .ms10)
        for n in 1...100 {
            let read = Self.start + Int64(n) * Self.f
            if let stamp = stamper.stamp(readAt: DJTime(ns: read), latencyNs: -4_000_000, realTimeNs: Self.start) {
                #expect(stamp.firstSample.ns + Self.f <= read)
            }
        }
        #expect(stamper.dropped == 0)
    }
}

import Foundation
import PartyRadioCore
import PartyRadioHTTP
import Testing

@testable import PartyRadioMedia

/// Real libmpv, headless (`ao=null`), playing a generated WAV. Each test takes a few seconds.
@Suite("Player (libmpv, ao=null)", .serialized)
final class PlayerTests {
    let directory: TemporaryDirectory
    let trackPath: String
    let clock = RealtimeClock()

    init() throws {
        directory = try TemporaryDirectory()
        // "Last Call Arpeggio" at a quarter length: 10 s.
        trackPath = try DemoLibrary.generate(into: directory.path, durationScale: 0.25)[5]
    }

    deinit { directory.cleanup() }

    /// Samples (local time, position) pairs every `intervalMs` for `seconds`.
    func samples(_ player: Player, seconds: Double, intervalMs: UInt32 = 20) -> [PlayerPosition] {
        var result: [PlayerPosition] = []
        let end = clock.now() + Int64(seconds * 1e9)
        while clock.now() < end {
            if let position = player.position() { result.append(position) }
            usleep(intervalMs * 1000)
        }
        return result
    }

    /// Least-squares slope of position over local time, and the residuals (ns).
    func fit(_ points: [PlayerPosition]) -> (slope: Double, residuals: [Int64]) {
        let t0 = points[0].sampledAtNs
        let p0 = points[0].positionNs
        let xs = points.map { Double($0.sampledAtNs - t0) }
        let ys = points.map { Double($0.positionNs - p0) }
        let mx = xs.reduce(0, +) / Double(xs.count)
        let my = ys.reduce(0, +) / Double(ys.count)
        let sxy = zip(xs, ys).reduce(0) { $0 + ($1.0 - mx) * ($1.1 - my) }
        let sxx = xs.reduce(0) { $0 + ($1 - mx) * ($1 - mx) }
        let slope = sxy / sxx
        return (slope, zip(xs, ys).map { Int64(($0.1 - my - slope * ($0.0 - mx)).rounded()) })
    }

    func magnitudeQuantile(_ values: [Int64], _ q: Double) -> Int64 {
        let sorted = values.map { $0.magnitude }.sorted()
        return Int64(sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * q))])
    }

    @Test("the position advances in real time (and how precisely)")
    func realTime() throws {
        let player = try Player(options: .init(audio: .none))
        defer { player.shutdown() }
        try player.load(trackPath)
        #expect(waitUntil(3) { (player.position()?.positionNs ?? 0) > 50_000_000 })
        let points = samples(player, seconds: 2)
        #expect(points.count > 50)
        let (slope, residuals) = fit(points)
        let p50 = magnitudeQuantile(residuals, 0.5)
        let p99 = magnitudeQuantile(residuals, 0.99)
        print(
            "player position (audio-pts) vs CLOCK_REALTIME over 2 s, \(points.count) samples: rate \(slope), "
                + "residual p50 \(p50 / 1000) µs p99 \(p99 / 1000) µs max \(magnitudeQuantile(residuals, 1) / 1000) µs; "
                + "ao \(player.audioOutputDriver ?? "?"), audio-pts \(player.stringProperty("audio-pts") ?? "n/a"), "
                + "time-pos \(player.stringProperty("time-pos") ?? "n/a"), audio-delay \(player.outputLatencyNs) ns")
        let names = (player.stringProperty("property-list") ?? "").split(separator: ",")
            .filter { $0.contains("latency") || $0.contains("delay") || $0.contains("ao-") || $0.contains("pts") }
        print(
            "mpv \(player.stringProperty("mpv-version") ?? "?") timing-related properties: \(names.joined(separator: " "))"
        )
        #expect(abs(slope - 1) < 0.01)
        #expect(p99 < 20_000_000)
        #expect(player.audioOutputDriver == "null")
        #expect(!player.isPaused)
    }

    @Test("the start-up pages go back to the kernel, and playing goes on")
    func releasesStartupPages() throws {
        let player = try Player(options: .init(audio: .none))
        defer { player.shutdown() }
        try player.load(trackPath)
        #expect(waitUntil(5) { (player.position()?.positionNs ?? 0) > Nanos.ms(300) })
        let release = try #require(StartupPages.release())
        // libmpv's tree alone is over 200 files (Debian 12).
        #expect(release.files > 100 && release.bytes > 0)
        // Less is resident: the mappings of every page it does not hold a copy of were dropped.
        let before = try #require(release.residentFileKBBefore)
        let after = try #require(release.residentFileKBAfter)
        print("PlayerTests: \(release)")
        #expect(after < before)
        let position = try #require(player.position()).positionNs
        #expect(waitUntil(3) { (player.position()?.positionNs ?? 0) > position + Nanos.seconds(1) })
    }

    @Test("automatic audio output falls back to null without a sound server or card")
    func automaticOutput() throws {
        let player = try Player(options: .init(audio: .automatic))
        defer { player.shutdown() }
        try player.load(trackPath)
        #expect(waitUntil(3) { (player.position()?.positionNs ?? 0) > 0 })
        print("player: automatic audio output chose \(player.audioOutputDriver ?? "nothing")")
        #expect(player.audioOutputDriver != nil)
    }

    @Test("plays a file served by MediaServer over loopback HTTP, joining mid-track")
    func overHTTP() throws {
        let server = try MediaServer(address: "127.0.0.1", port: 0)
        defer { server.stop() }
        let token = try server.register(path: trackPath)
        let player = try Player(options: .init(audio: .none))
        defer { player.shutdown() }
        try player.load(server.url(token: token), startNs: 7_000_000_000)
        #expect(waitUntil(3) { (player.position()?.positionNs ?? 0) > 7_100_000_000 })
        let position = try #require(player.position())
        #expect(position.positionNs < 7_600_000_000)
        #expect(player.durationNs.map { abs($0 - 10_000_000_000) < 50_000_000 } == true)
    }

    @Test("starts at the requested position")
    func startOffset() throws {
        let player = try Player(options: .init(audio: .none))
        defer { player.shutdown() }
        let loadedAt = clock.now()
        try player.load(trackPath, startNs: 6_500_000_000)
        #expect(waitUntil(3) { player.position() != nil })
        let first = try #require(player.position())
        print(
            "player: first position after load at 6.5 s: \(first.positionNs) ns, \((first.sampledAtNs - loadedAt) / 1_000_000) ms after load"
        )
        #expect(first.positionNs >= 6_500_000_000 && first.positionNs < 6_800_000_000)
        #expect(player.durationNs.map { abs($0 - 10_000_000_000) < 50_000_000 } == true)
    }

    @Test("seeks exactly, pauses, changes speed, stops")
    func controls() throws {
        let player = try Player(options: .init(audio: .none))
        defer { player.shutdown() }
        try player.load(trackPath, startNs: 1_000_000_000)
        #expect(waitUntil(3) { (player.position()?.positionNs ?? 0) > 1_050_000_000 })

        let seekAt = clock.now()
        try player.seek(toNs: 7_250_000_000)
        #expect(waitUntil(2) { (player.position()?.positionNs ?? 0) >= 7_250_000_000 })
        usleep(300_000)
        let afterSeek = try #require(player.position())
        let restart = afterSeek.positionNs - 7_250_000_000 - (afterSeek.sampledAtNs - seekAt)
        print("player: seek landed \(restart / 1_000_000) ms off (negative = restart delay)")
        #expect(afterSeek.positionNs >= 7_250_000_000 && afterSeek.positionNs < 7_700_000_000)

        try player.setPaused(true)
        usleep(100_000)
        let pausedA = try #require(player.position())
        usleep(300_000)
        let pausedB = try #require(player.position())
        #expect(pausedA.positionNs == pausedB.positionNs)
        #expect(player.isPaused)

        try player.seek(toNs: 1_000_000_000)
        try player.setSpeed(1.05)
        try player.setPaused(false)
        usleep(200_000)
        let fast = fit(samples(player, seconds: 1))
        print("player: rate at speed 1.05: \(fast.slope)")
        #expect(abs(fast.slope - 1.05) < 0.01)

        try player.stop()
        #expect(waitUntil(2) { player.isIdle && player.position() == nil })
    }

    @Test("events: loaded, restarted, end of file")
    func events() async throws {
        let player = try Player(options: .init(audio: .none))
        defer { player.shutdown() }
        try player.load(trackPath, startNs: 9_700_000_000)
        var seen: [PlayerEvent] = []
        for await event in player.events {
            seen.append(event)
            if case .endOfFile = event { break }
        }
        #expect(seen.contains(.fileLoaded))
        #expect(seen.contains(.playbackRestarted))
        #expect(seen.last == .endOfFile(.finished))
        try player.load(directory.file("missing.wav"))
        for await event in player.events {
            if case .endOfFile(let reason) = event {
                #expect(reason != .finished)
                break
            }
        }
    }

    @Test("SyncController holds the player on a moving station position")
    func syncController() throws {
        // As the nodes make it: with pitch correction, mpv inserts scaletempo whenever the speed is not 1,
        // which shifts audio-pts by 10-20 ms and turns a nudge into a jump (docs/MEDIA.md).
        let player = try Player(options: .init(audio: .none, pitchCorrection: false))
        defer { player.shutdown() }
        let controller = SyncController(player: player)
        let epoch = clock.now()
        var jump: Int64 = 0
        let station: (Int64) -> Int64 = { 2_000_000_000 + ($0 - epoch) + jump }
        try controller.load(trackPath, stationPositionAt: station)
        var errors: [Int64] = []
        var seeks = 0
        let end = epoch + 5_000_000_000
        while clock.now() < end {
            if jump == 0 && clock.now() > epoch + 2_500_000_000 { jump = 25_000_000 }  // station jumps 25 ms: nudge
            let status = controller.tick(stationPositionAt: station)
            if status.seekedToNs != nil { seeks += 1 }
            if clock.now() > epoch + 4_500_000_000, let error = status.errorNs { errors.append(error) }
            usleep(controller.isPreparing ? 10_000 : 100_000)
        }
        let worst = errors.map { $0.magnitude }.max() ?? .max
        print(
            "sync controller on real mpv: \(seeks) re-alignment(s), "
                + "errors over the last 0.5 s (ms): \(errors.map { Double($0 / 10_000) / 100 })")
        #expect(!errors.isEmpty)
        // 12 ms on a quiet machine; 16.9 ms seen once under CI's parallel test processes.
        #expect(worst < 25_000_000)
    }

    @Test("SyncController resumes after a pause: a paused seek of a player that has played starts on time")
    func syncControllerResume() throws {
        // As the nodes make it: with pitch correction, mpv inserts scaletempo whenever the speed is not 1,
        // which shifts audio-pts by 10-20 ms and turns a nudge into a jump (docs/MEDIA.md).
        let player = try Player(options: .init(audio: .none, pitchCorrection: false))
        defer { player.shutdown() }
        let controller = SyncController(player: player)
        let epoch = clock.now()
        try controller.load(trackPath, stationPositionAt: { 1_000_000_000 + ($0 - epoch) })
        while clock.now() < epoch + 1_500_000_000 {
            controller.tick(stationPositionAt: { 1_000_000_000 + ($0 - epoch) })
            usleep(controller.isPreparing ? 10_000 : 100_000)
        }
        #expect(!controller.isPreparing, "started")
        try controller.pause()
        usleep(300_000)
        // Resumed 3 s further on: mpv reports such a paused seek ~185 ms early until it plays.
        let resumedAt = clock.now()
        let station: (Int64) -> Int64 = { 4_000_000_000 + ($0 - resumedAt) }
        try controller.resume(stationPositionAt: station)
        var errors: [Int64] = []
        while clock.now() < resumedAt + 2_000_000_000 {
            let status = controller.tick(stationPositionAt: station)
            if clock.now() > resumedAt + 1_000_000_000, let error = status.errorNs { errors.append(error) }
            usleep(controller.isPreparing ? 10_000 : 100_000)
        }
        #expect(!controller.isPreparing, "playing again within 2 s")
        #expect(!errors.isEmpty && errors.allSatisfy { $0.magnitude < 12_000_000 }, "\(errors)")
    }
}

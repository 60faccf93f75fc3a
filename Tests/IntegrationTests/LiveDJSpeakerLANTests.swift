import Foundation
import PartyRadioCore
import Testing

/// The DJ's own speakers on a live station (issue 28, docs/LIVE.md, "The DJ's own speakers"): what
/// the DJ broadcasts is heard on its machine at the same station time as on every listener's, not
/// ahead of them. A DJ on host 1 and a listener on host 2 each play into a PulseAudio null sink of
/// their own, recorded from its monitor by one clock (CLOCK_REALTIME, shared by all namespaces);
/// host 3 catches the group for the clicks' stamps. The station's delay is the DJ's `--latency`
/// (150 ms, not the default), which its frames carry; the listener adds its own `--latency-extra`.
@Suite(
    "A live DJ's own speakers on the LAN", .serialized,
    .enabled(if: Testbed.isRoot, "integration tests build network namespaces, which needs root"))
struct LiveDJSpeakerLANTests {
    /// `dj --latency 150`: the DJ's speakers play at stamp + 150 ms.
    static let delayNs: Int64 = 150_000_000
    /// `listen --latency-extra 30`: the listener plays 30 ms after the station's delay.
    static let extraNs: Int64 = 30_000_000

    @Test(
        "The DJ hears its live station at stamp + its --latency, the listener at that + its --latency-extra",
        .enabled(if: hasPulseAudio, "PulseAudio is not installed (scripts/ensure-packages.sh --for test)"))
    func djSpeakerBesideListener() throws {
        let lan = try Testbed(hosts: 3)
        defer {
            lan.shutdown()
            lan.cleanStateDirs()
        }
        let dir = lan.stateDir("live")
        let fifo = "\(dir)/snapfifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let (djSound, djEnv) = try lan.startSoundServer(host: 1)
        defer { djSound.kill() }
        // Not --no-audio: a live DJ's speakers play the station (startDJ's `playing`).
        let dj = try lan.startDJ(
            host: 1, name: "Live Party", playing: true,
            extra: ["--live", "pipe:\(fifo)?sampleformat=48000:16:2", "--latency", "150"],
            env: djEnv)
        defer { dj.kill() }
        let started = try dj.waitForEvent("started") { $0.name == "station_started" }
        let group = try #require(started.string("group")).split(separator: ":")

        let (listenerSound, listenerEnv) = try lan.startSoundServer(host: 2)
        defer { listenerSound.kill() }
        let listener = try LiveLANTests.startListener(
            lan, host: 2, env: listenerEnv, extra: ["--latency-extra", "30"])
        defer { listener.kill() }

        let seconds = 6
        let written = seconds * 1000 / LiveLANTests.clickMs
        let recorder = Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/monitor_record.py").path
        let recorders = try [(1, djEnv), (2, listenerEnv)].map { host, env in
            let process = try lan.spawn(
                host: host, ["python3", "-u", recorder, String(seconds + 6), "\(dir)/monitor\(host).raw"], env: env)
            try process.waitForLine(containing: "ready", timeout: .seconds(15))
            return process
        }
        defer { for process in recorders { process.kill() } }
        let capturePath = "\(dir)/caught.txt"
        let capture = try LiveLANTests.captureGroup(lan, host: 3, group: group, seconds: seconds + 4, path: capturePath)
        let writer = Testbed.repoRoot.appendingPathComponent("Tests/Fixtures/live_pcm_writer.py").path
        let wrote = try lan.run(
            host: 1, ["python3", "-u", writer, fifo, String(seconds), String(LiveLANTests.clickMs)],
            timeout: .seconds(60))
        #expect(wrote.exit == 0, "\(wrote.stderr)")
        try capture.waitForLine(containing: "done", timeout: .seconds(30))
        let dones = try recorders.map { try $0.waitForLine(containing: "done", timeout: .seconds(30)) }

        let frames = try LiveLANTests.frames(caught: capturePath)
        let stamps = try LiveLANTests.clickStamps(frames)
        let heardDJ = try LivePulseLANTests.clicks(recording: "\(dir)/monitor1.raw", done: dones[0])
        let heardListener = try LivePulseLANTests.clicks(recording: "\(dir)/monitor2.raw", done: dones[1])
        // Each click against the nearest stamp + the delay it should be heard at; and the DJ's against
        // the listener's nearest, less the listener's extra.
        func errors(_ heard: [Int64], delayNs: Int64 = Self.delayNs) -> [Double] {
            heard.compactMap { at in stamps.map { Double(at - ($0 + delayNs)) / 1e6 }.min { abs($0) < abs($1) } }
        }
        let listenerErrors = errors(heardListener, delayNs: Self.delayNs + Self.extraNs)
        let skews = heardDJ.compactMap { at in
            heardListener.map { Double(at + Self.extraNs - $0) / 1e6 }.min { abs($0) < abs($1) }
        }
        let round = { (values: [Double]) in values.map { ($0 * 10).rounded() / 10 } }
        print(
            "live dj speaker: \(written) clicks written, \(stamps.count) on the group; DJ heard \(heardDJ.count), "
                + "- (stamp + 150 ms): \(round(errors(heardDJ))) ms; listener heard \(heardListener.count), "
                + "- (stamp + 180 ms): \(round(listenerErrors)) ms; DJ + 30 ms - listener: \(round(skews)) ms")
        #expect(stamps.count * 4 >= written * 3, "clicks on the group: \(stamps.count) of \(written)")
        // Each player's last counters: placements, underruns, the error and the ratio.
        for (who, process) in [("DJ", dj), ("listener", listener)] {
            let status = process.events.last { $0.name == "live_status" }
            let fields = ["played", "concealed", "underruns", "placements", "skipped", "error_us", "ppm"]
            let values = fields.map { "\($0) \(status?.int($0) ?? 0)" }.joined(separator: " ")
            print("live dj speaker: \(who) live_status \(values)")
        }
        // Half at least of each check (under CI's load an output runs dry now and then and loses a click).
        #expect(heardDJ.count * 2 >= written && heardDJ.count <= written + 1, "DJ's clicks: \(heardDJ.count)")
        // On the station's time, as the listener's speaker is (LiveLANTests' bound): a DJ that played
        // what it captures at once, ahead of the room by the delay, is 150 ms off and fails here, and
        // one at the default delay (the --latency lost) 90 ms.
        let onTime = errors(heardDJ).filter { abs($0) <= 30 }.count
        #expect(onTime * 2 >= written, "DJ's clicks within 30 ms of stamp + 150 ms: \(errors(heardDJ))")
        // The listener at the station's delay (which only the frames told it) plus its own extra.
        let listenerOnTime = listenerErrors.filter { abs($0) <= 20 }.count
        #expect(
            listenerOnTime * 2 >= written, "listener's clicks within 20 ms of stamp + 180 ms: \(listenerErrors)")
        // And beside the listener's speaker (its extra taken off): one station time. Within a frame and a half:
        // on a loaded machine either player may place its output again a frame off (seen: the
        // DJ's and the listener's 10 ms apart after one such step); the skew itself is bench-live's.
        let together = skews.filter { abs($0) <= 15 }.count
        #expect(together * 2 >= written, "DJ's clicks within 15 ms of the listener's: \(skews)")
        dj.kill(signal: SIGINT)
        _ = dj.wait(timeout: .seconds(10))
    }
}

import Foundation
import PartyRadioCore
import Testing

@testable import PartyRadioMedia

/// The precise start on real libmpv (`ao=null`). In the Player suite so that they run serialised with
/// the other libmpv tests: they count the process's threads and time starts to the millisecond.
extension PlayerTests {
    /// A station that is at `positionNs` now and moves in real time.
    func station(at positionNs: Int64) -> (Int64) -> Int64 {
        let epoch = clock.now()
        return { positionNs + ($0 - epoch) }
    }

    /// Ticks a preparing controller until its start is armed; returns the instant it is armed for.
    func tickUntilArmed(_ controller: SyncController, _ station: (Int64) -> Int64) -> Int64? {
        let deadline = clock.now() + Nanos.seconds(3)
        while clock.now() < deadline {
            controller.tick(stationPositionAt: station)
            if let startAt = controller.pendingStartNs { return startAt }
            usleep(5_000)
        }
        return nil
    }

    /// Player (at the speakers) minus station, now.
    func error(_ player: Player, _ station: (Int64) -> Int64) -> Int64? {
        player.position().map { $0.positionNs - player.outputLatencyNs - station($0.sampledAtNs) }
    }

    @Test("SyncController: a pause that lands while a start is pending leaves the player paused")
    func pauseWhileStartPending() throws {
        let player = try Player(options: .init(audio: .none))
        defer { player.shutdown() }
        let controller = SyncController(player: player)
        // Pauses from before the instant to after it, most of them within the few microseconds in
        // which a start that has passed its check is issuing its unpause.
        let offsetsNs: [Int64] = [-300_000, -20_000, 0, 1_000, 2_000, 3_000, 5_000, 8_000, 12_000, 20_000, 300_000]
        for (index, offset) in offsetsNs.enumerated() {
            let station = station(at: 2_000_000_000)
            if index == 0 {
                try controller.load(trackPath, stationPositionAt: station)
            } else {
                try controller.resume(stationPositionAt: station)
            }
            let startAt = try #require(tickUntilArmed(controller, station), "armed (pause \(offset) ns after)")
            while clock.now() < startAt + offset {}
            try controller.pause()
            usleep(250_000)
            let before = player.position()
            usleep(100_000)
            let after = player.position()
            #expect(player.isPaused, "paused \(offset) ns after the start instant")
            #expect(before != nil && before?.positionNs == after?.positionNs, "not moving (\(offset) ns)")
            #expect(!controller.isPreparing)
        }
    }

    @Test("SyncController: starts are on time, after a load and after a pause")
    func startOnTime() throws {
        let player = try Player(options: .init(audio: .none))
        defer { player.shutdown() }
        let controller = SyncController(player: player)
        for (index, position) in [Int64(1_000_000_000), 5_000_000_000].enumerated() {
            let station = station(at: position)
            if index == 0 {
                try controller.load(trackPath, stationPositionAt: station)
            } else {
                try controller.pause()
                usleep(200_000)
                try controller.resume(stationPositionAt: station)
            }
            let startAt = try #require(tickUntilArmed(controller, station))
            // No ticks after the start: this is the start alone, uncorrected.
            usleep(UInt32(max(0, startAt - clock.now()) / 1000) + 300_000)
            let measured = try #require(error(player, station))
            print("sync controller: start \(index == 0 ? "after a load" : "after a pause"): \(measured / 1000) µs off")
            #expect(!player.isPaused)
            #expect(!controller.isPreparing)
            #expect(measured.magnitude < 15_000_000, "\(measured) ns off")
        }
    }

    @Test("SyncController: consecutive starts use its one start thread, which shutdown ends")
    func oneStartThread() throws {
        let player = try Player(options: .init(audio: .none))
        defer { player.shutdown() }
        let controller = SyncController(player: player)
        var station = station(at: 1_000_000_000)
        try controller.load(trackPath, stationPositionAt: station)
        _ = try #require(tickUntilArmed(controller, station))
        #expect(waitUntil(2) { !controller.isPreparing })

        let baseline = ProcessThreads.ids()
        var seen = Set<Int>()
        for cycle in 0..<20 {
            station = self.station(at: 1_000_000_000 + Int64(cycle % 4) * 500_000_000)
            try controller.resume(stationPositionAt: station)
            _ = try #require(tickUntilArmed(controller, station), "cycle \(cycle) armed")
            seen.formUnion(ProcessThreads.ids())  // a thread per start would be alive now
            #expect(waitUntil(2) { !controller.isPreparing }, "cycle \(cycle) started")
        }
        let new = seen.subtracting(baseline)
        let after = ProcessThreads.ids()
        print(
            "sync controller: \(baseline.count) threads before 20 starts, \(after.count) after, \(new.count) new seen")
        #expect(new.count <= 4, "new threads: \(new.sorted())")
        #expect(after.count <= baseline.count + 2)
        #expect(ProcessThreads.count(named: "partyradio-sync") == 1)
        controller.shutdown()
        #expect(waitUntil(1) { ProcessThreads.count(named: "partyradio-sync") == 0 })
    }
}

import Foundation
import PartyRadioCore
import PartyRadioMPRIS
import Synchronization
import Testing

private let hasDBus = FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon")

/// The live DJ's MPRIS follower against partyradio's own MPRIS player (``MPRISService``, which
/// serves whatever values it is given) on a private session bus: a D-Bus daemon on a Unix socket
/// in a temporary directory, no network.
@Suite(
    "MPRIS follower on a private session bus", .serialized,
    .enabled(if: hasDBus, "dbus-daemon is not installed (scripts/ensure-packages.sh)"))
struct MPRISFollowerTests {
    /// A session bus of the test's own.
    final class Bus {
        let process = Process()
        let directory: String
        var address: String { "unix:path=\(directory)/bus" }

        init() throws {
            directory = NSTemporaryDirectory() + "partyradio-bus-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
            process.arguments = ["--session", "--nofork", "--address=\(address)"]
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(10)
            while !FileManager.default.fileExists(atPath: "\(directory)/bus") && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }

        func stop() {
            // SIGKILL: the test process blocks signals its children inherit, SIGTERM among them.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// Polls `value` until it is not nil (at most 5 s).
    func wait<T>(_ what: String, _ value: () -> T?) throws -> T {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if let value = value() { return value }
            Thread.sleep(forTimeInterval: 0.02)
        }
        Issue.record("timed out waiting for \(what)")
        throw CancellationError()
    }

    /// The Player properties MPRISService serves (it answers none of GetAll without all of them), with
    /// nonsense metadata around `title`.
    static func player(title: String) -> [String: DBusValue] {
        [
            "PlaybackStatus": .string("Playing"), "Rate": .double(1), "Volume": .double(1), "MinimumRate": .double(1),
            "MaximumRate": .double(1), "CanGoNext": .bool(true), "CanGoPrevious": .bool(true), "CanPlay": .bool(true),
            "CanPause": .bool(true), "CanSeek": .bool(false), "CanControl": .bool(true),
            "Metadata": .dictionary([
                "xesam:title": .string(title),
                "xesam:artist": .dictionary(["nested": .strings(["not an artist"])]),
                "xesam:album": .int64(3),
                "mpris:length": .string("forever"),
                "mpris:trackid": .objectPath("/t/1"),
                "x-flag": .bool(true),
                "x-number": .double(.nan),
                "x-list": .strings(Array(repeating: "x", count: 1000)),
            ]),
        ]
    }

    @Test("reads any value, cleans the text, follows changes, makes the calls, and says when the player leaves")
    func follows() throws {
        let bus = try Bus()
        defer { bus.stop() }
        let calls = Mutex<[MPRISCall]>([])
        let huge = "\u{1B}[2JTitle\u{202E} " + String(repeating: "é", count: 100_000)
        let player = try MPRISService(
            address: bus.address,
            properties: MPRISProperties(root: [:], player: Self.player(title: huge), positionUs: 5_000_000)
        ) { call in calls.withLock { $0.append(call) } }
        defer { player.close() }
        let states = Mutex<[LivePlayerState?]>([])
        let logs = Mutex<[String]>([])
        let follower = try MPRISFollower(
            address: bus.address, choice: .named("partyradio"),
            onState: { state in states.withLock { $0.append(state) } },
            log: { line in logs.withLock { $0.append(line) } })
        defer {
            follower.close()
            print("MPRIS follower's log: \(logs.withLock { $0 })")
        }

        let state = try wait("the first state") { states.withLock { $0.last ?? nil } }
        #expect(state.player == LivePlayerChoice.shortName(player.busName))
        #expect(state.status == .playing && (state.positionUs ?? 0) >= 5_000_000)
        let track = try #require(state.track)
        #expect(track.title.hasPrefix("Title") && track.title.utf8.count <= LivePlayerState.maxText, "\(track.title)")
        #expect(!track.title.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{202E}" })
        #expect(track.artist.isEmpty && track.album.isEmpty && track.lengthUs == 0 && track.trackID == "/t/1")

        for call: LivePlayerCall in [.next, .previous, .pause, .play] { follower.call(call) }
        let made = try wait("the calls") { calls.withLock { $0.count >= 4 ? $0 : nil } }
        #expect(made == [.next, .previous, .pause, .play])

        // A change the player announces is read again.
        player.update(MPRISProperties(root: [:], player: Self.player(title: "Second")))
        _ = try wait("the new title") { states.withLock { $0.last??.track?.title == "Second" ? true : nil } }

        // The player leaves the bus: no player.
        player.close()
        _ = try wait("no player") { states.withLock { $0.last.map { $0 == nil ? true : nil } ?? nil } }
    }

    @Test("no bus at that address: an error, nothing follows")
    func noBus() {
        #expect(throws: MPRISError.self) {
            try MPRISFollower(
                address: "unix:path=/nonexistent/partyradio.bus", choice: .playing, onState: { _ in }, log: { _ in })
        }
    }
}

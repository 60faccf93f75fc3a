// partyradio-bench-storage: how fast the DJ's database answers `partyradio stats` over many plays,
// and what one save of the station costs.
//
//   swift run -c release partyradio-bench-storage [--plays N] [--iterations N] [--keep DIR]
//
// Works in a fresh temporary folder (or DIR, kept for `partyradio stats --state-dir DIR`). Prints
// figures; asserts nothing about them.
import Foundation
import PartyRadioCore
import PartyRadioStorage

var plays = 10_000
var iterations = 20
var keep: String?
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--plays": plays = arguments.next().flatMap(Int.init).map { max(1, $0) } ?? plays
    case "--iterations": iterations = arguments.next().flatMap(Int.init).map { max(1, $0) } ?? iterations
    case "--keep": keep = arguments.next()
    case "-h", "--help":
        print("USAGE: partyradio-bench-storage [--plays N] [--iterations N] [--keep DIR]")
        exit(0)
    default:
        FileHandle.standardError.write(Data("Error: unknown argument '\(argument)'.\n".utf8))
        exit(2)
    }
}

func seconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Median, 90th percentile and maximum of `samples` (seconds), in milliseconds.
func summary(_ samples: [Double]) -> String {
    let sorted = samples.sorted()
    func at(_ fraction: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))] }
    return String(
        format: "median %8.3f ms  p90 %8.3f ms  max %8.3f ms", at(0.5) * 1e3, at(0.9) * 1e3, sorted.last! * 1e3)
}

func line(_ name: String, _ samples: [Double]) {
    print(name.padding(toLength: 52, withPad: " ", startingAt: 0) + summary(samples))
}

func fail(_ error: any Error) -> Never {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    exit(1)
}

let folder = URL(
    fileURLWithPath: keep
        ?? FileManager.default.temporaryDirectory.appendingPathComponent(
            "partyradio-bench-storage-\(getpid())"
        ).path)
try? FileManager.default.removeItem(at: folder)
try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { if keep == nil { try? FileManager.default.removeItem(at: folder) } }

do {
    let store = try DJStore(directory: folder)
    // Plays spread over 40 nights of 300 tracks' worth, some requested.
    let nights = 40
    let perNight = (plays + nights - 1) / nights
    var written = 0
    let fill = seconds()
    for night in 0..<nights where written < plays {
        let session = try store.beginSession(station: "Bench", at: DJTime(ns: Int64(night) * 86_400_000_000_000))
        for n in 0..<perNight where written < plays {
            let id = "local:\((night * 7 + n) % 300)"
            try store.record(
                PlayRecord(
                    trackID: id, title: "Title \(id)", artist: "Artist \(n % 40)",
                    startedAt: DJTime(ns: Int64(night) * 86_400_000_000_000 + Int64(n) * 180_000_000_000),
                    listenersAtStart: n % 12, up: UInt32(n % 5), down: UInt32(n % 3),
                    ending: n % 9 == 0 ? .crowdSkip : n % 7 == 0 ? .djSkip : .played,
                    requestedBy: n % 4 == 0 ? "Guest \(n % 10)" : nil), session: session)
            written += 1
        }
        try store.endSession(session, at: DJTime(ns: Int64(night + 1) * 86_400_000_000_000 - 1))
    }
    print(
        "partyradio storage benchmark: \(written) plays in \(nights) nights, \(iterations) iterations, \(folder.path)")
    print(
        String(
            format: "%@ %.0f ms (one transaction per play, as the DJ writes)", "writing them took",
            (seconds() - fill) * 1e3))

    var all: [Double] = []
    var latest: [Double] = []
    for _ in 0..<iterations {
        var start = seconds()
        let reader = try DJStore(directory: folder)
        let every = try reader.nights()
        _ = every.map { TrackStats.summarize($0.plays) }
        all.append(seconds() - start)
        start = seconds()
        let last = try DJStore(directory: folder).nights(latestOnly: true)
        _ = last.map { TrackStats.summarize($0.plays) }
        latest.append(seconds() - start)
    }
    line("stats --all: open, read \(written) plays, sum up", all)
    line("stats (latest night): open, read, sum up", latest)

    // Saves as the DJ makes them: the position every second, a vote, a chat line.
    let queue = (0..<300).map {
        Track(
            id: "local:\($0)", title: "Title \($0)", artist: "Artist", album: "Album", durationMs: 200_000,
            source: "http://10.0.0.1:8080/\($0)")
    }
    var station = SavedStation(
        queue: queue, index: 0, interlude: nil, positionNs: 0, paused: false, repeatMode: .all, volume: 100,
        votes: VoteBook(trackID: "local:0"), requests: RequestBook(), chat: ChatBook())
    try store.saveStation(station, at: LocalTime(ns: 0))
    var position: [Double] = []
    var vote: [Double] = []
    var chat: [Double] = []
    for n in 1...max(iterations, 200) {
        station.positionNs += 1_000_000_000
        var start = seconds()
        try store.saveStation(station, at: LocalTime(ns: Int64(n)))
        position.append(seconds() - start)
        let key = PublicKey(bytes: (0..<32).map { UInt8(truncatingIfNeeded: n &* 31 &+ $0) })!
        _ = station.votes.apply(voter: key, trackID: "local:0", choice: .up)
        start = seconds()
        try store.saveStation(station, at: LocalTime(ns: Int64(n)))
        vote.append(seconds() - start)
        _ = station.chat.submit(
            ChatSend(messageID: 1, name: "Guest", text: "line \(n)"), from: key, now: DJTime(ns: Int64(n)))
        start = seconds()
        try store.saveStation(station, at: LocalTime(ns: Int64(n)))
        chat.append(seconds() - start)
    }
    line("save: the position only (300-track queue)", position)
    line("save: a vote (up to 200 voters)", vote)
    line("save: a chat line (100 lines kept)", chat)
    print("integrity_check: \(try store.integrityCheck())")
} catch {
    fail(error)
}

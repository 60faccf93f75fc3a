// partyradio-bench-forgery — `make bench` part `forgery`: forged and replayed datagrams against
// the DJ's machine with real Ed25519 (libsodium), across a restart from its saved station.
//
// 1. 1,000 guests vote (real keys, real signatures); every vote datagram is kept.
// 2. The DJ is "killed" and started again from its saved station (empty replay windows).
// 3. N forged votes (made-up keys and signatures, from many addresses) and N replays of the
//    captured votes (each guest's older votes, from their own addresses) are sent to it.
// Prints how many were accepted by the filter and how many changed the tally: the goal is 0.
import Foundation
import PartyRadioCore
import PartyRadioSecurity

struct Verifier: DatagramVerifier {
    func verify(_ datagram: Datagram) -> Bool { Sodium.verify(datagram) }
    func stationID(for key: PublicKey) -> StationID? { Sodium.stationID(for: key) }
}

let count = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 1_000_000
let station = Identity.generate()
let track = Track(id: "t0", title: "Bench", artist: "B", album: "", durationMs: 3_600_000, source: "http://x/0")
func configuration(saved: SavedStation?) -> DJMachine.Configuration {
    DJMachine.Configuration(
        name: "Bench",
        advert: StationAdvert(
            stationID: station.stationID, group: station.stationID.multicastGroup,
            publicKey: station.publicKey),
        queue: [track], port: 4000, interfaceName: "lo", address: "10.0.0.1", playsAudio: false, saved: saved)
}
var clock = LocalTime(ns: 1_000_000_000_000)
@MainActor func tick() -> LocalTime {
    clock = clock + 50_000  // 20,000 datagrams a second
    return clock
}
var dj = DJMachine(configuration: configuration(saved: nil), verifier: Verifier(), now: clock)
_ = dj.handle(.start, at: clock)

// 1. Guests vote: up, then down, then up again; the last one stands.
let guests = (0..<1000).map { _ in Identity.generate() }
var captured: [(bytes: [UInt8], from: PeerAddress)] = []
var sequence: UInt64 = 1_700_000_000_000_000_000
for (n, guest) in guests.enumerated() {
    let from = PeerAddress(host: "10.1.\(n / 250).\(n % 250 + 1)", port: 5000)
    for choice in [VoteChoice.up, .down, .up] {
        sequence += 1_000
        let bytes = try! Datagram.encode(
            .vote(Vote(trackID: track.id, choice: choice)), stationID: station.stationID, sequence: sequence,
            signer: guest)
        captured.append((bytes, from))
        _ = dj.handle(.datagram(bytes, from: from), at: tick())
    }
}
let before = dj.engine.votes.tally
print("partyradio forgery benchmark: \(guests.count) guests voted, tally \(before.up) up \(before.down) down")

// 2. The restart.
let saved = dj.saved(at: tick())
dj = DJMachine(configuration: configuration(saved: saved), verifier: Verifier(), now: clock)
_ = dj.handle(.start, at: clock)

// 3. Forgeries and replays.
/// Signs with made-up bytes: a forgery with a key nobody holds.
struct Forger: Signer {
    let publicKey = PublicKey(bytes: (0..<32).map { _ in UInt8.random(in: 0...255) })!
    func sign(_ bytes: [UInt8]) -> [UInt8] { (0..<64).map { _ in UInt8.random(in: 0...255) } }
}
func forged() -> [UInt8] {
    try! Datagram.encode(
        .vote(Vote(trackID: track.id, choice: .down)), stationID: station.stationID,
        sequence: UInt64.random(in: 1...UInt64.max), signer: Forger())
}
var countedChanges = 0
var acceptedForged = 0
let start = Date()
for n in 0..<count {
    let tally = dj.engine.votes.tally
    let reports: [Effect]
    if n % 2 == 0 {
        let from = PeerAddress(host: "10.2.\(n / 65_536 % 256).\(n / 256 % 256)", port: 9)
        reports = dj.handle(.datagram(forged(), from: from), at: tick())
        acceptedForged += reports.contains { if case .report(.voteCounted) = $0 { true } else { false } } ? 1 : 0
    } else {
        // Replays of the guests' first two votes (up, down): older than the last one applied.
        let old = captured[(n / 2) % captured.count]
        if (n / 2) % 3 == 2 { continue }  // the last vote of each guest is the one standing
        reports = dj.handle(.datagram(old.bytes, from: old.from), at: tick())
    }
    if dj.engine.votes.tally != tally { countedChanges += 1 }
}
let seconds = Date().timeIntervalSince(start)
let drops = dj.filter.drops.counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
print(
    "  \(count) datagrams after the restart (half forged, half replays of older votes) in \(String(format: "%.1f", seconds)) s"
)
print("  forged votes counted: \(acceptedForged); datagrams that changed the tally: \(countedChanges)")
print(
    "  tally before the restart \(before.up)/\(before.down), after \(dj.engine.votes.tally.up)/\(dj.engine.votes.tally.down)"
)
print("  dropped: \(drops)")

// partyradio-bench-votes — `make bench` part `votes`: signed votes tallied per second on one core.
//
// G guests (real Ed25519 keys, each on its own address) are in the room: each has been heard once
// (a heartbeat), as listeners are. Then every guest votes, as fast as this thread can take them,
// through the DJ's whole path: decode, the sender gate, the replay window, the signature
// (libsodium), the tally, and the save that must precede the acknowledgement. Three ways:
//   1. the machine alone (no storage), one datagram at a time and in batches of 64: the ceiling;
//   2. one save (SQLite, dj.sqlite in a temporary folder) after every vote: how the runtime
//      worked before it batched;
//   3. batches of up to 64 datagrams, each with one save: how the runtime works
//      (NodeRuntime.deliver(batch:), DJMachine.handle(batch:));
//   4. the same, and every datagram the DJ sends encoded and signed (the acknowledgements, the
//      snapshots: what the runtime's transport does, short of the socket);
//   5. 3 and 4 again with the votes authenticated by the session MAC instead of a signature (what
//      a guest sends a DJ that advertises `mac=1`; its key made when the guest was first heard).
// Prints votes per second for each, on one thread: per second of this thread's CPU time (what one
// core does, whatever else the machine runs) and, in brackets, of the wall clock.
import Foundation
import PartyRadioCore
import PartyRadioSecurity
import PartyRadioStorage

struct Verifier: DatagramVerifier {
    /// The DJ's key, for session MACs (nil: it takes none).
    let sessions: Identity?
    func verify(_ datagram: Datagram) -> Bool { Sodium.verify(datagram) }
    func stationID(for key: PublicKey) -> StationID? { Sodium.stationID(for: key) }
    func sessionKey(with peer: PublicKey) -> SessionKey? { sessions?.sessionKey(with: peer) }
    func verify(_ datagram: Datagram, sessionKey key: SessionKey) -> Bool { Sodium.verify(datagram, sessionKey: key) }
}

/// This thread's CPU time in seconds: the machine this runs on is often busy with builds, and the
/// figure wanted is what one core does.
func cpuSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// "N votes/s (M by the wall clock)" for `count` done in `cpu` CPU and `wall` wall seconds.
func rate(_ count: Int, cpu: Double, wall: Double) -> String {
    "\(Int(Double(count) / cpu))/s of CPU (\(Int(Double(count) / wall))/s by the wall clock, \(String(format: "%.2f", cpu)) s CPU)"
}

let guestCount = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 10_000
let batch = 64
let station = Identity.generate()
let track = Track(id: "t0", title: "Bench", artist: "B", album: "", durationMs: 36_000_000, source: "http://x/0")
let configuration = DJMachine.Configuration(
    name: "Bench",
    advert: StationAdvert(
        stationID: station.stationID, group: station.stationID.multicastGroup, publicKey: station.publicKey),
    queue: [track], port: 4000, interfaceName: "lo", address: "10.0.0.1", playsAudio: false)

print("partyradio votes benchmark: \(guestCount) guests, each on its own address, one vote each, one thread")
let guests = (0..<guestCount).map { _ in Identity.generate() }
let addresses = (0..<guestCount).map {
    PeerAddress(host: "10.\($0 / 65_536 % 256).\($0 / 256 % 256).\($0 % 256)", port: 5000)
}
var sequence: UInt64 = 1_700_000_000_000_000_000
@MainActor func datagram(_ message: Message, from guest: Identity) -> [UInt8] {
    sequence += 1_000
    return try! Datagram.encode(message, stationID: station.stationID, sequence: sequence, signer: guest)
}
let heartbeats = guests.map { datagram(.heartbeat(Heartbeat()), from: $0) }
let votes = guests.enumerated().map {
    datagram(.vote(Vote(trackID: track.id, choice: $0.offset % 3 == 0 ? .down : .up)), from: $0.element)
}
/// The same votes with a session MAC in place of the signature.
let macVotes = guests.enumerated().map { index, guest in
    sequence += 1_000
    return try! Datagram.encode(
        .vote(Vote(trackID: track.id, choice: index % 3 == 0 ? .down : .up)), stationID: station.stationID,
        sequence: sequence, session: guest.sessionSigner(for: station.publicKey)!, fallback: guest)
}

/// The votes through a DJ machine: one input at a time (`batchSize` nil) or in batches, each
/// followed by its save when `saving`, and with what it sends encoded and signed when `sending`.
@MainActor func run(_ name: String, batchSize: Int?, saving: Bool, sending: Bool = false, macs: Bool = false) {
    let votes = macs ? macVotes : votes
    var clock = LocalTime(ns: 1_800_000_000_000_000_000)
    var dj = DJMachine(configuration: configuration, verifier: Verifier(sessions: macs ? station : nil), now: clock)
    _ = dj.handle(.start, at: clock)
    // The room: every guest heard once, slowly enough for the gate (not timed).
    for (index, bytes) in heartbeats.enumerated() {
        clock = clock + 1_000_000  // 1,000 a second
        _ = dj.handle(.datagram(bytes, from: addresses[index]), at: clock)
    }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("partyradio-bench-votes-\(UUID())")
    try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let store = saving ? try! DJStore(directory: folder) : nil
    var saves = 0
    var saveCPU = 0.0
    var sent = 0
    var sendCPU = 0.0
    var sendSequence: UInt64 = 1
    let start = Date()
    let startCPU = cpuSeconds()
    // Batches as the runtime makes them (NodeRuntime.deliver(batch:)): the datagrams of one
    // wake-up handed over together, then the batch's save before any of its effects.
    let size = batchSize ?? 1
    for first in stride(from: 0, to: votes.count, by: size) {
        var inputs: [(NodeInput, LocalTime)] = []
        for index in first..<min(first + size, votes.count) {
            clock = clock + 20_000  // 50,000 a second on the DJ's clock
            inputs.append((.datagram(votes[index], from: addresses[index]), clock))
        }
        let effects = batchSize == nil ? inputs.flatMap { dj.handle($0.0, at: $0.1) } : dj.handle(batch: inputs)
        if saving, case .save(let station) = effects.first {
            let before = cpuSeconds()
            try! store!.saveStation(station, at: clock)
            saveCPU += cpuSeconds() - before
            saves += 1
        }
        guard sending else { continue }
        // What the runtime's transport does with each send, short of the socket: encode and sign.
        let before = cpuSeconds()
        for case .send(let message, _, let id) in effects {
            sendSequence += 1
            sent +=
                try! Datagram.encode(message, stationID: id, sequence: sendSequence, signer: station).count > 0 ? 1 : 0
        }
        sendCPU += cpuSeconds() - before
    }
    let cpu = cpuSeconds() - startCPU
    let seconds = Date().timeIntervalSince(start)
    let tally = dj.engine.votes.tally
    print(
        "  \(name): votes \(rate(votes.count, cpu: cpu, wall: seconds)); tally \(tally.up) up "
            + "\(tally.down) down; \(saves) saves"
            + (saves > 0 ? " (\(Int(saveCPU / cpu * 100)) % of the CPU time)" : "")
            + (sending ? "; \(sent) datagrams signed (\(Int(sendCPU / cpu * 100)) % of the CPU time)" : "")
            + "; dropped \(dj.filter.drops.total)")
}

// The ceiling under the ceiling: libsodium's Ed25519 verification alone, on the same datagrams.
if CommandLine.arguments.firstIndex(of: "--only") == nil {
    let decoded = votes.map { try! Datagram.decode($0) }
    let start = Date()
    let startCPU = cpuSeconds()
    var valid = 0
    for datagram in decoded where Sodium.verify(datagram) { valid += 1 }
    let cpu = cpuSeconds() - startCPU
    let seconds = Date().timeIntervalSince(start)
    print(
        "  Ed25519 verification alone (libsodium): signatures \(rate(decoded.count, cpu: cpu, wall: seconds)); "
            + "\(valid) valid")
}

// `--only machine|each|batch` runs one of the three (for a profiler).
let only = CommandLine.arguments.firstIndex(of: "--only").map { CommandLine.arguments[$0 + 1] }
if only == nil || only == "machine" {
    run("machine only (decode, gate, replay, Ed25519, tally)", batchSize: nil, saving: false)
    run("machine only, batches of \(batch)", batchSize: batch, saving: false)
}
if only == nil || only == "each" { run("with a save after every vote", batchSize: 1, saving: true) }
if only == nil || only == "batch" {
    run("with a save per batch of \(batch) (the runtime)", batchSize: batch, saving: true)
}
if only == nil || only == "send" {
    run("the runtime, and its datagrams signed", batchSize: batch, saving: true, sending: true)
}
if only == nil || only == "mac" {
    run("session MACs: machine only, batches of \(batch)", batchSize: batch, saving: false, macs: true)
    run("session MACs: the runtime", batchSize: batch, saving: true, macs: true)
    run(
        "session MACs: the runtime, and its datagrams signed", batchSize: batch, saving: true, sending: true, macs: true
    )
}

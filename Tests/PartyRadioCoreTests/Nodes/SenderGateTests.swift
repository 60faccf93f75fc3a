import NodeTestSupport
import Synchronization
import Testing

@testable import PartyRadioCore

/// Cheap rejection first: a flood of forged datagrams costs hash lookups, not signature checks.
@Suite struct SenderGateTests {
    /// Counts the signature checks it is asked for.
    final class CountingVerifier: DatagramVerifier {
        let checks = Atomic<Int>(0)
        func verify(_ datagram: Datagram) -> Bool {
            checks.add(1, ordering: .relaxed)
            return ChecksumVerifier().verify(datagram)
        }
    }

    let id = Fixture.stationID

    /// A vote whose signature is garbage: checking it costs a full verification.
    func forged(key: UInt64, sequence: UInt64) -> [UInt8] {
        let sender = PublicKey(bytes: withUnsafeBytes(of: key) { Array($0) } + [UInt8](repeating: 0x5A, count: 24))!
        let header = MessageHeader(kind: .vote, stationID: id, sender: sender, sequence: sequence)
        var writer = ByteWriter()
        header.encode(into: &writer)
        Vote(trackID: "t0", choice: .up).encode(into: &writer)
        return writer.bytes + [UInt8](repeating: 0xEE, count: Datagram.signatureSize)
    }

    @Test func oneAddressGetsItsShareOfVerifications() {
        let verifier = CountingVerifier()
        var filter = DatagramFilter(verifier: verifier)
        let flooder = PeerAddress(host: "10.0.0.66", port: 9)
        // 20,000 forged votes in one second from one address.
        for n in 0..<20_000 {
            _ = filter.accept(
                forged(key: UInt64(n), sequence: 1), from: flooder, at: t0 + Int64(n) * 50_000, policy: .listenersOf(id)
            )
        }
        let limits = SenderGate.Limits()
        #expect(verifier.checks.load(ordering: .relaxed) <= limits.perAddressBurst + limits.perAddressRate + 1)
        #expect(filter.drops.counts["rate_limited", default: 0] >= 19_000)
        // A listener on another address is verified and accepted meanwhile.
        var listener = Peer("10.0.0.7", key: 7)
        let hello = listener.bytes(.hello(Hello(listenerName: "kitchen")), station: id)
        #expect(filter.accept(hello, from: listener.address, at: t0 + Nanos.ms(999), policy: .listenersOf(id)) != nil)
    }

    @Test func manyAddressesShareOneBudgetAndKnownListenersKeepTheirs() {
        let verifier = CountingVerifier()
        var filter = DatagramFilter(verifier: verifier, limits: .init(verificationsPerSecond: 1000))
        var listener = Peer("10.0.0.7", key: 7)
        #expect(
            filter.accept(
                listener.bytes(.heartbeat(Heartbeat()), station: id), from: listener.address, at: t0,
                policy: .listenersOf(id)) != nil)
        // 10,000 forged votes from 10,000 (spoofed) addresses within a second.
        for n in 0..<10_000 {
            let from = PeerAddress(host: "10.\(n / 65536).\(n / 256 % 256).\(n % 256)", port: 9)
            _ = filter.accept(
                forged(key: UInt64(n), sequence: 1), from: from, at: t0 + Int64(n) * 90_000, policy: .listenersOf(id))
        }
        #expect(verifier.checks.load(ordering: .relaxed) <= 1000 + 1)
        let counts = filter.drops.counts
        #expect(counts["over_budget", default: 0] + counts["challenged", default: 0] >= 9_000)
        // Over budget, the listener already in the room is still heard.
        let beat = listener.bytes(.heartbeat(Heartbeat()), station: id)
        #expect(filter.accept(beat, from: listener.address, at: t0 + Nanos.ms(950), policy: .listenersOf(id)) != nil)
        // A second later the budget is back for everyone.
        var newcomer = Peer("10.9.9.9", key: 9)
        let hello = newcomer.bytes(.hello(Hello(listenerName: "late")), station: id)
        #expect(filter.accept(hello, from: newcomer.address, at: t0 + Nanos.ms(2_000), policy: .listenersOf(id)) != nil)
    }

    @Test func replaysAreDroppedBeforeTheirSignatureIsChecked() {
        let verifier = CountingVerifier()
        var filter = DatagramFilter(verifier: verifier)
        var listener = Peer("10.0.0.7", key: 7)
        let bytes = listener.bytes(.heartbeat(Heartbeat()), station: id)
        #expect(filter.accept(bytes, from: listener.address, at: t0, policy: .listenersOf(id)) != nil)
        for n in 1...100 {
            #expect(filter.accept(bytes, from: listener.address, at: t0 + Int64(n), policy: .listenersOf(id)) == nil)
        }
        #expect(verifier.checks.load(ordering: .relaxed) == 1)
        #expect(filter.drops.counts == ["replayed": 100])
    }
}

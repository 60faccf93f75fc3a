import Foundation
import Synchronization
import Testing

@testable import PartyRadioCore
@testable import PartyRadioSecurity

@Suite struct SecurityTests {
    @Test func signaturesVerifyAndForgeriesDoNot() throws {
        let dj = Identity.generate()
        let mallory = Identity.generate()
        let bytes = try Datagram.encode(
            .goodbye(Goodbye(reason: "bye")), stationID: dj.stationID, sequence: 1, signer: dj)
        let datagram = try Datagram.decode(bytes)
        #expect(Sodium.verify(datagram))
        var tampered = bytes
        tampered[MessageHeader.size + 1] ^= 0x20
        #expect(!Sodium.verify(try Datagram.decode(tampered)))
        // Mallory signs with her key but claims to be the DJ: the header names the DJ's key.
        var forged = try Datagram.decode(
            try Datagram.encode(.goodbye(Goodbye(reason: "bye")), stationID: dj.stationID, sequence: 2, signer: mallory)
        )
        forged.header.sender = dj.publicKey
        #expect(!Sodium.verify(signature: forged.signature, of: forged.signedBytes, by: dj.publicKey))
    }

    @Test func stationIDsAreStableForAKey() {
        let identity = Identity.generate()
        #expect(identity.stationID == Sodium.stationID(for: identity.publicKey))
        #expect(Identity(seed: identity.seed)?.publicKey == identity.publicKey)
        #expect(Identity(seed: [1, 2, 3]) == nil)
    }

    @Test func keyStoreCreatesOnceAndRefusesDamagedFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pr-keys-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = KeyStore(directory: directory)
        let first = try store.loadOrCreate("station")
        #expect(try store.loadOrCreate("station").publicKey == first.publicKey)
        let path = directory.appendingPathComponent("station.key").path
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
        #expect(throws: KeyStore.Failure.self) { try store.loadOrCreate("station") }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data([1, 2, 3]))  // left as it was
    }
}

@Suite struct KeyStoreRaceTests {
    @Test func processesMakingOneKeyAtOnceAllGetTheFirstOne() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let keys = Mutex<[PublicKey]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            if let identity = try? KeyStore(directory: directory).loadOrCreate("voter") {
                keys.withLock { $0.append(identity.publicKey) }
            }
        }
        let made = keys.withLock { $0 }
        #expect(made.count == 8 && Set(made).count == 1)
        #expect(try KeyStore(directory: directory).loadOrCreate("voter").publicKey == made.first)
    }
}

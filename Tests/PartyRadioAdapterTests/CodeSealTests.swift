import Foundation
import Testing

@testable import PartyRadioCore
@testable import PartyRadioSecurity

/// The keys a join code stands for, and the AEAD that seals a private station's datagrams and
/// TXT record with them.
@Suite struct CodeSealTests {
    // Argon2id is slow on purpose: one seal per code for the whole suite.
    static let code = JoinCode(entropy: [1, 2, 3, 4, 5, 6, 7, 8, 9])
    static let seal = CodeSeal(code: code)
    static let other = CodeSeal(code: JoinCode(entropy: [1, 2, 3, 4, 5, 6, 7, 8, 0x89]))

    @Test func keysFollowTheCodeAndDifferPerUse() throws {
        let again = CodeSeal(code: try JoinCode(parsing: Self.code.grouped.lowercased()))
        #expect(again.mediaProof == Self.seal.mediaProof && again.webProof == Self.seal.webProof)
        #expect(Self.seal.mediaProof.count == 64 && Self.seal.mediaProof != Self.seal.webProof)
        #expect(Self.other.mediaProof != Self.seal.mediaProof, "one bit of the code changes every key")
        #expect(Self.seal.mediaProof != Hex.encode(Array(Self.code.normalized.utf8)))
        #expect(CodeSeal.sameProof(Self.seal.mediaProof, again.mediaProof))
        #expect(!CodeSeal.sameProof(Self.seal.mediaProof, Self.other.mediaProof))
        #expect(!CodeSeal.sameProof("", ""))
    }

    @Test func datagramsRoundTripAndHideTheirBytes() {
        let plain = Array("PR\u{1}title: Sunrise Scale".utf8) + [UInt8](repeating: 7, count: 100)
        let sealed = Self.seal.seal(datagram: plain)
        #expect(SealedDatagram.isSealed(sealed))
        #expect(sealed.count == plain.count + SealedDatagram.overhead)
        #expect(Self.seal.open(datagram: sealed) == plain)
        #expect(!String(decoding: sealed, as: UTF8.self).contains("Sunrise"))
        // Random nonces: the same datagram never seals to the same bytes twice.
        #expect(Self.seal.seal(datagram: plain) != sealed)
    }

    @Test func tamperedOrForeignDatagramsDoNotOpen() {
        let sealed = Self.seal.seal(datagram: Array(repeating: 0x42, count: 80))
        for index in [0, 1, 2, 25, 26, 60, sealed.count - 1] {
            var tampered = sealed
            tampered[index] ^= 0x01
            #expect(Self.seal.open(datagram: tampered) == nil, "byte \(index) flipped")
        }
        #expect(Self.other.open(datagram: sealed) == nil)
        #expect(Self.seal.open(datagram: Array(sealed.dropLast())) == nil)
        #expect(Self.seal.open(datagram: SealedDatagram.marker) == nil)
        #expect(Self.seal.open(datagram: []) == nil)
    }

    @Test func randomBytesNeverOpen() {
        var random = SplitMix64(seed: 10)
        for round in 0..<3000 {
            let count = Int(random.next() % 1300)
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if round % 2 == 0 && bytes.count >= 2 {
                bytes[0] = 0x50
                bytes[1] = 0x53
            }
            #expect(Self.seal.open(datagram: bytes) == nil)
            #expect(Self.seal.open(txt: String(decoding: bytes.prefix(300), as: UTF8.self)) == nil)
        }
    }

    @Test func theTXTRecordRoundTripsAndSaysOnlyThatItIsPrivate() throws {
        let identity = Identity.generate()
        let advert = StationAdvert(
            stationID: identity.stationID, group: identity.stationID.multicastGroup, publicKey: identity.publicKey,
            webPort: 8080, isPrivate: true)
        let txt = advert.sealedTXTRecord(Self.seal)
        #expect(txt.count == 3 && txt[0] == "v=1" && txt[1] == "priv=1" && txt[2].hasPrefix("seal="))
        #expect(txt.allSatisfy { $0.utf8.count <= 255 }, "each TXT string fits its 255 bytes: \(txt[2].utf8.count)")
        let clear = txt.joined(separator: " ")
        #expect(!clear.contains(identity.stationID.hex) && !clear.contains(identity.publicKey.base64url))
        #expect(!clear.contains(advert.group.description))
        #expect(txt == advert.sealedTXTRecord(Self.seal), "the same record seals to the same strings")
        // Not an advert without the code.
        #expect(throws: StationAdvert.Problem.self) { try StationAdvert(txtRecord: txt) }

        let blob = try #require(StationAdvert.sealedBlob(in: txt))
        let opened = try #require(Self.seal.open(txt: blob))
        #expect(try StationAdvert(txtRecord: opened) == advert)
        #expect(Self.other.open(txt: blob) == nil, "another code does not open it")
        #expect(StationAdvert.sealedBlob(in: advert.txtRecord) == nil, "a public record has no seal")
    }

    @Test func theCodeIsKeptBesideTheStationKey() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "code-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = KeyStore(directory: directory)
        let first = try store.loadOrCreateCode()
        #expect(try store.loadOrCreateCode() == first)
        let path = directory.appendingPathComponent("station.code").path
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let renewed = try store.loadOrCreateCode(renew: true)
        #expect(try renewed != first && store.loadOrCreateCode() == renewed)
        try "not a code".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: KeyStore.Failure.self) { try store.loadOrCreateCode() }
    }
}

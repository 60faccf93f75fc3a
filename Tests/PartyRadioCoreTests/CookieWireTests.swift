import Testing

@testable import PartyRadioCore

/// The admission cookie on the wire (docs/PROTOCOL.md, "Admission cookies"): bit 6 of the kind byte
/// says 8 cookie bytes follow the 52-byte header, on the kinds a guest sends only; the DJ's cookie
/// challenge (kind 22) is the one datagram with no signature or MAC, and takes neither flag.
@Suite struct CookieWireTests {
    let station = StationID(rawValue: 0x0123_4567_89AB_CDEF)

    @Test func aCookieFollowsTheHeaderAndTheSignatureCoversIt() throws {
        let bytes = try Datagram.encode(
            .query(Query()), stationID: station, sequence: 0x0102, signer: FakeSigner(9), cookie: 0xA1B2_C3D4_E5F6_0718)
        #expect(bytes.count == 52 + 8 + Datagram.signatureSize)
        #expect(bytes[3] == 0x40 | 8)
        #expect(Array(bytes[52..<60]) == [0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6, 0x07, 0x18])
        let decoded = try Datagram.decode(bytes)
        #expect(decoded.header.cookie == 0xA1B2_C3D4_E5F6_0718)
        #expect(decoded.message == .query(Query()))
        #expect(decoded.signedBytes == Array(bytes[..<60]))
        // With a session MAC too: both flags.
        let vote = try Datagram.encode(
            .vote(Vote(trackID: "t", choice: .up)), stationID: station, sequence: 1, session: FakeSessionSigner(9),
            fallback: FakeSigner(9), cookie: 5)
        #expect(vote[3] == 0x80 | 0x40 | 5)
        let both = try Datagram.decode(vote)
        #expect(both.header.cookie == 5 && both.header.authentication == .session)
    }

    @Test func theChallengeIsHeaderAndSixteenBytesUnsigned() throws {
        let bytes = try Datagram.encode(
            .cookieChallenge(CookieChallenge(echo: 0x0102, cookie: 0x0304)), stationID: station, sequence: 9,
            signer: FakeSigner(9))
        #expect(bytes.count == 68)
        #expect(bytes[3] == 22)
        #expect(Array(bytes[52..<68]) == [0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 3, 4])
        let decoded = try Datagram.decode(bytes)
        #expect(decoded.header.authentication == .unsigned && decoded.signature.isEmpty)
        #expect(decoded.message == .cookieChallenge(CookieChallenge(echo: 0x0102, cookie: 0x0304)))
        // A signature-sized tail is trailing bytes, not a signature.
        #expect(throws: WireError.trailingBytes(64)) { try Datagram.decode(bytes + [UInt8](repeating: 0, count: 64)) }
        #expect(throws: WireError.truncated) { try Datagram.decode(Array(bytes.dropLast())) }
    }

    @Test func flagsOnKindsThatDoNotTakeThemAreUnknownKinds() throws {
        let snapshot = try Datagram.encode(
            .goodbye(Goodbye(reason: "bye")), stationID: station, sequence: 1, signer: FakeSigner(9))
        let challenge = try Datagram.encode(
            .cookieChallenge(CookieChallenge(echo: 1, cookie: 2)), stationID: station, sequence: 1,
            signer: FakeSigner(9))
        let query = try Datagram.encode(.query(Query()), stationID: station, sequence: 1, signer: FakeSigner(9))
        for (bytes, flag) in [(snapshot, 0x40), (challenge, 0x40), (challenge, 0x80), (query, 0x80)]
            as [([UInt8], UInt8)]
        {
            var flagged = bytes
            flagged[3] |= flag
            #expect(throws: WireError.unknownKind(flagged[3])) { try Datagram.decode(flagged) }
        }
        // The encoder never puts a cookie on a DJ's kind.
        let dj = try Datagram.encode(
            .goodbye(Goodbye(reason: "bye")), stationID: station, sequence: 1, signer: FakeSigner(9), cookie: 3)
        #expect(dj == snapshot)
    }

    /// Property: any kind byte and any tail either fails to decode or decodes to a datagram that
    /// encodes to the same bytes (cookie, authentication and message kept), seeded for repeatability.
    @Test func anyKindByteDecodesConsistently() throws {
        var random = SplitMix64(seed: 0xC00C1E)
        var decodedCount = 0
        for _ in 0..<20_000 {
            var bytes = [0x50, 0x52, 1, UInt8.random(in: 0...255, using: &random)]
            bytes += (0..<(8 + 32 + 8)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let tail = Int.random(in: 0...120, using: &random)
            bytes += (0..<tail).map { _ in UInt8.random(in: 0...3, using: &random) }
            guard let datagram = try? Datagram.decode(bytes) else { continue }
            decodedCount += 1
            let header = datagram.header
            #expect((header.cookie != nil) == (bytes[3] & 0x40 != 0))
            #expect(header.cookie == nil || header.kind.takesCookie)
            #expect((header.authentication == .unsigned) == header.kind.isUnauthenticated)
            #expect(header.authentication != .session || header.kind.takesSessionMAC)
            #expect(datagram.signedBytes.count == bytes.count - Datagram.trailerSize(header.authentication))
            #expect(Array(bytes[..<header.encodedSize]) == Array(datagram.signedBytes[..<header.encodedSize]))
        }
        #expect(decodedCount > 0)
    }
}

/// A MAC maker of the right size; what it makes does not matter to the codec.
private struct FakeSessionSigner: SessionSigner {
    let publicKey: PublicKey
    init(_ seed: UInt8) { publicKey = PublicKey(bytes: [UInt8](repeating: seed, count: 32))! }
    func mac(_ bytes: [UInt8]) -> [UInt8] { [UInt8](repeating: 0xAB, count: Datagram.sessionMACSize) }
}

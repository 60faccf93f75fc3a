import Testing

@testable import PartyRadioCore

@Suite struct PlaybackAnchorTests {
    @Test func positionFollowsRateAndClamps() {
        let anchor = PlaybackAnchor.playing(at: Nanos.seconds(10), djTime: 1_000)
        #expect(anchor.position(atDJTime: 1_000 + Nanos.seconds(5)) == Nanos.seconds(15))
        #expect(anchor.position(atDJTime: 1_000 - Nanos.seconds(20)) == 0)
        #expect(
            anchor.position(atDJTime: 1_000 + Nanos.seconds(500), durationNs: Nanos.seconds(30)) == Nanos.seconds(30))
        let paused = PlaybackAnchor.paused(at: 77, djTime: 0)
        #expect(paused.position(atDJTime: Nanos.seconds(1000)) == 77)
        #expect(paused.djTime(whenPositionReaches: 100) as DJTime? == nil)
        let slow = PlaybackAnchor(djTimeNs: 0, positionNs: 0, rateMicros: 500_000)
        #expect(slow.position(atDJTime: 2_000) == 1_000)
        #expect(anchor.djTime(whenPositionReaches: Nanos.seconds(12)) == 1_000 + Nanos.seconds(2))
    }

    @Test func extremeTimesDoNotTrap() {
        let anchor = PlaybackAnchor(djTimeNs: .min, positionNs: .max, rateMicros: .max)
        _ = anchor.position(atDJTime: .max)
        _ = anchor.djTime(whenPositionReaches: .min) as DJTime?
        _ = PlaybackAnchor(djTimeNs: .max, positionNs: .min, rateMicros: .max).position(atDJTime: .min)
    }
}

@Suite struct DiscoveryModelTests {
    let key = PublicKey(bytes: (0..<32).map { UInt8($0) })!

    @Test func txtRecordRoundTripsAndStaysSmall() throws {
        let id = StationID(rawValue: 0xDEAD_BEEF_0000_0001)
        let advert = StationAdvert(
            stationID: id, group: id.multicastGroup, publicKey: key, webPort: 8080, isPrivate: true)
        #expect(try StationAdvert(txtRecord: advert.txtRecord) == advert)
        #expect(advert.txtRecord.map(\.utf8.count).reduce(0, +) < 150)
    }

    @Test func badTXTRecordsNameTheKey() {
        let good = StationAdvert(
            stationID: StationID(rawValue: 1), group: StationID(rawValue: 1).multicastGroup, publicKey: key)
        var txt = good.txtRecord.filter { !$0.hasPrefix("pk=") }
        #expect(throws: StationAdvert.Problem.missing("pk")) { try StationAdvert(txtRecord: txt) }
        txt = good.txtRecord.map { $0.hasPrefix("grp=") ? "grp=224.0.0.251:5353" : $0 }
        #expect(throws: StationAdvert.Problem.invalid("grp")) { try StationAdvert(txtRecord: txt) }
        txt = good.txtRecord.map { $0.hasPrefix("v=") ? "v=9" : $0 }
        #expect(throws: StationAdvert.Problem.unsupportedVersion("9")) { try StationAdvert(txtRecord: txt) }
        txt = good.txtRecord + ["future=1", "garbage"]
        #expect((try? StationAdvert(txtRecord: txt)) == good)
    }

    @Test func randomTXTRecordsNeverCrash() {
        var generator = SeededGenerator(seed: 5)
        let alphabet = Array("v=idgrpk0123456789abcdef.:-_ABC=")
        for _ in 0..<5_000 {
            let entries = (0..<Int.random(in: 0...8, using: &generator)).map { _ in
                String(
                    (0..<Int.random(in: 0...50, using: &generator)).map { _ in
                        alphabet.randomElement(using: &generator)!
                    })
            }
            _ = try? StationAdvert(txtRecord: entries)
        }
    }

    @Test func groupsAreOrganisationLocalAndDerivedFromTheID() {
        for raw: UInt64 in [0, 1, .max, 0xFFFA_0000_0000_0000, 0x1234_5678_9ABC_DEF0] {
            let group = StationID(rawValue: raw).multicastGroup
            #expect(group.a == 239 && group.b == 255)
            #expect(group.d != 0 && group.d != 255)
            #expect((40000..<50000).contains(group.port))
            #expect(MulticastGroup(parsing: group.description) == group)
        }
        #expect(MulticastGroup(parsing: "239.255.1") == nil)
        #expect(MulticastGroup(parsing: "239.255.1.2:0") == nil)
    }

    @Test func stationIDsAndKeysParse() {
        #expect(StationID(hex: "00000000000000ff")?.rawValue == 255)
        #expect(StationID(rawValue: 255).hex == "00000000000000ff")
        #expect(StationID(hex: "xyz") == nil)
        #expect(PublicKey(base64url: key.base64url) == key)
        #expect(PublicKey(base64url: "not base64!") == nil)
        #expect(PublicKey(base64url: Base64URL.encode([1, 2, 3])) == nil)
        for length in 0..<10 {
            let bytes = (0..<length).map { UInt8($0 * 37 & 255) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }

    @Test func stationNamesFollowTheRule() throws {
        #expect(try StationName(validating: "  Rooftop  ").value == "Rooftop")
        #expect(try StationName(validating: String(repeating: "a", count: 60)).value.count == 60)
        // One DNS label: 63 bytes of UTF-8, whatever the characters.
        #expect(try StationName(validating: String(repeating: "ä", count: 31) + "a").value.utf8.count == 63)
        #expect(throws: StationName.Problem.tooManyBytes(64, limit: 63)) {
            try StationName(validating: String(repeating: "ä", count: 32))
        }
        #expect(throws: StationName.Problem.tooManyBytes(64, limit: 63)) {
            try StationName(validating: String(repeating: "🎶", count: 16))
        }
        #expect(throws: StationName.Problem.empty) { try StationName(validating: " \t ") }
        #expect(throws: StationName.Problem.tooLong(61)) {
            try StationName(validating: String(repeating: "x", count: 61))
        }
        #expect(throws: StationName.Problem.controlCharacters) { try StationName(validating: "a\u{7}b") }
    }

    @Test func matcherPrefersExactThenIDThenPrefix() {
        let a = StationID(rawValue: 0xAAAA_0000_0000_0001)
        let b = StationID(rawValue: 0xBBBB_0000_0000_0002)
        let candidates = [(name: "Rooftop", id: a, value: 1), (name: "Roof", id: b, value: 2)]
        func result(_ query: String?) -> String {
            switch StationMatcher.match(query, among: candidates) {
            case .found(let value): "\(value)"
            case .none: "none"
            case .ambiguous(let values): "ambiguous \(values)"
            }
        }
        #expect(result("Roof") == "2")
        #expect(result("rooft") == "1")
        #expect(result("roo") == "ambiguous [1, 2]")
        #expect(result("bbbb") == "2")
        #expect(result(a.hex) == "1")
        #expect(result("Cellar") == "none")
        #expect(result(nil) == "ambiguous [1, 2]")
    }

    @Test func directoryListsOnlyHeardStationsAndExpiresSilentOnes() {
        var directory = StationDirectory(silenceTimeoutNs: 100)
        let id = StationID(rawValue: 7)
        let advert = StationAdvert(stationID: id, group: id.multicastGroup, publicKey: key)
        directory.resolved(serviceName: "Rooftop", advert: advert, address: "10.0.0.1", port: 1)
        #expect(directory.listed.isEmpty)
        #expect(ok(directory.heard(id, snapshot: Samples.snapshot(), now: 0) == .appeared(id)))
        #expect(ok(directory.heard(id, snapshot: Samples.snapshot(), now: 50) == nil))
        #expect(ok(directory.expire(now: 100).isEmpty))
        #expect(ok(directory.expire(now: 151) == [.vanished(id, name: "Rooftop", reason: "went silent")]))
        #expect(directory.listed.isEmpty)
        #expect(ok(directory.heard(id, snapshot: Samples.snapshot(), now: 200) == .appeared(id)))
        #expect(ok(directory.removed(serviceName: "Rooftop") == [.vanished(id, name: "Rooftop", reason: "withdrawn")]))
        #expect(directory.heard(id, snapshot: Samples.snapshot(), now: 300) == nil)  // unknown until resolved again
    }
}

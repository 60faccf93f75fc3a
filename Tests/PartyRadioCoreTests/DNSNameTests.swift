import Testing

@testable import PartyRadioCore

@Suite struct DNSNameTests {
    @Test func namesInADomain() {
        #expect(DNSName.serviceName(domain: "party.example") == "_partyradio._udp.party.example.")
        #expect(
            DNSName.instanceName("Roof Top", domain: "party.example.") == "Roof\\ Top._partyradio._udp.party.example.")
        #expect(
            DNSName.hostName(station: StationID(rawValue: 0xC09D_2EEF_1DC2_6468), domain: "party.example")
                == "dj-c09d2eef1dc26468.party.example.")
    }

    @Test func aTakenNameGetsANumber() {
        #expect(DNSName.instanceCandidates("Roof").prefix(3) == ["Roof", "Roof #2", "Roof #3"])
        #expect(DNSName.instanceCandidates("Roof").count == 9)
    }

    @Test func labelsAreEscapedForPresentation() {
        #expect(DNSName.escapeLabel("a.b\\c\"d;e(f)g@h$i") == "a\\.b\\\\c\\\"d\\;e\\(f\\)g\\@h\\$i")
        #expect(DNSName.escapeLabel("Café") == "Caf\\195\\169")
        #expect(DNSName.escapeLabel("\u{1B}[31m") == "\\027[31m")
        #expect(DNSName.escapeLabel(String(repeating: "x", count: 100)).count == 63)
        #expect(DNSName.quoteTXT("pk=a\"b\\c") == "\"pk=a\\\"b\\\\c\"")
        #expect(DNSName.quoteTXT("é") == "\"\\195\\169\"")
    }

    @Test func domainsAreChecked() {
        #expect(DNSName.check(domain: "party.example") == nil)
        #expect(DNSName.check(domain: "party.example.") == nil)
        #expect(DNSName.check(domain: "") != nil)
        #expect(DNSName.check(domain: "a..b") != nil)
        #expect(DNSName.check(domain: "bad domain") != nil)
        #expect(DNSName.check(domain: String(repeating: "a", count: 64)) != nil)
    }

    @Test func wireNamesAndStrings() {
        let wire: [UInt8] = [8] + Array("Roof Top".utf8) + [4] + Array("_udp".utf8) + [0]
        #expect(DNSName.labels(wire: wire)?.count == 2)
        #expect(DNSName.instance(wire: wire) == "Roof Top")
        #expect(DNSName.text(wire: wire) == "Roof\\ Top._udp.")
        #expect(DNSName.labels(wire: [0]) == [])
        #expect(DNSName.labels(wire: [3, 0x61, 0x62]) == nil)  // runs past the end
        #expect(DNSName.labels(wire: [1, 0x61]) == nil)  // no terminating zero
        #expect(DNSName.labels(wire: [1, 0x61, 0, 0]) == nil)  // bytes after the end
        #expect(DNSName.labels(wire: [0xC0, 0x0C]) == nil)  // a compression pointer
        #expect(DNSName.txtString(wire: [3] + Array("v=1".utf8)) == "v=1")
        #expect(DNSName.txtString(wire: [4] + Array("v=1".utf8)) == nil)
        #expect(DNSName.txtString(wire: []) == nil)
    }
}

@Suite struct TSIGKeyTests {
    let keygen = """
        key "partyradio" {
        \talgorithm hmac-sha256;
        \tsecret "5GkL/tT4++AscNd5v9E+/WO1xPeYcfSS1lOHsdpvewM=";
        };

        """

    @Test func readsWhatTsigKeygenWrites() throws {
        let key = try TSIGKey(keyFile: keygen)
        #expect(
            key
                == TSIGKey(
                    name: "partyradio", algorithm: "hmac-sha256", secret: "5GkL/tT4++AscNd5v9E+/WO1xPeYcfSS1lOHsdpvewM="
                ))
        let commented = "# made by hand\n// another\n/* and\n this */ " + keygen
        #expect(try TSIGKey(keyFile: commented) == key)
    }

    @Test func refusesWhatItCannotUse() {
        let cases = [
            "", "key", "key partyradio { };", "key \"k\" { algorithm hmac-sha256; };",
            "key \"k\" { secret \"abc=\"; };", "key \"k\" { algorithm hmac-md5; secret \"abc=\"; };",
            "key \"k\" { algorithm hmac-sha256; secret \"not base64!\"; };",
            "key \"k\" { algorithm hmac-sha256 secret \"abc=\"; };", "key \"k\" { algorithm hmac-sha256; secret \"abc",
            "key \"k\" { colour blue; };", "/* open", "options { };",
        ]
        for text in cases {
            #expect(throws: TSIGKey.ParseError.self, "\(text)") { try TSIGKey(keyFile: text) }
        }
    }
}

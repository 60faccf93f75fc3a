import Foundation
import PartyRadioCore
import PartyRadioNode
import Testing

@testable import PartyRadioCLI

/// The `PARTYRADIO_*` variables: one table, read in one place, all of them in the man page.
@Suite struct EnvironmentKnobsTests {
    @Test func unsetOrEmptyIsTheDefault() {
        #expect(EnvironmentKnobs([:]) == EnvironmentKnobs())
        let empty = Dictionary(uniqueKeysWithValues: EnvironmentKnobs.table.map { ($0.name, "") })
        #expect(EnvironmentKnobs(empty) == EnvironmentKnobs())
        let knobs = EnvironmentKnobs()
        #expect(knobs.iTunesURL == "https://itunes.apple.com" && knobs.appleMusicURL == "https://api.music.apple.com")
        #expect(knobs.appleMusicToken == nil && knobs.appleMusicKey == nil && knobs.musicUserToken == nil)
        #expect(knobs.dnsLease == DNSLease() && knobs.player == PlayerTuning())
    }

    @Test func theCatalogAndAppleMusic() {
        let knobs = EnvironmentKnobs([
            "PARTYRADIO_ITUNES_URL": "http://h:1", "PARTYRADIO_APPLE_MUSIC_URL": "http://h:2/",
            "PARTYRADIO_APPLE_MUSIC_TOKEN": "a.b.c", "PARTYRADIO_APPLE_MUSIC_KEY": "/k.p8",
            "PARTYRADIO_APPLE_MUSIC_TEAM_ID": "ABCDE12345", "PARTYRADIO_APPLE_MUSIC_KEY_ID": "KEY1234567",
            "PARTYRADIO_MUSIC_USER_TOKEN": "u", "ITUNES_URL": "http://not-ours",
        ])
        #expect(knobs.iTunesURL == "http://h:1" && knobs.appleMusicURL == "http://h:2/")
        #expect(knobs.catalogEndpoints.appleMusicBaseURL == "http://h:2")
        #expect(knobs.appleMusicToken == "a.b.c" && knobs.appleMusicKey == "/k.p8")
        #expect(knobs.appleMusicTeamID == "ABCDE12345" && knobs.appleMusicKeyID == "KEY1234567")
        #expect(knobs.musicUserToken == "u")
    }

    @Test func theDNSLeaseIsAtLeastTheMinimumAndNonsenseIsTheDefault() {
        func lease(_ text: String) -> Int { EnvironmentKnobs(["PARTYRADIO_DNS_LEASE": text]).dnsLease.seconds }
        #expect(lease("12") == 12)
        #expect(lease("2") == DNSLease.minimumSeconds)
        #expect(lease("soon") == DNSLease.defaultSeconds)
    }

    @Test func thePlayersSwitches() {
        func player(_ name: String, _ text: String) -> PlayerTuning { EnvironmentKnobs([name: text]).player }
        // Only 0 turns a switch off.
        #expect(!player("PARTYRADIO_MEDIA_CACHE", "0").mediaCache)
        #expect(player("PARTYRADIO_MEDIA_CACHE", "no").mediaCache)
        #expect(!player("PARTYRADIO_MEDIA_CACHE_PARTIAL", "0").playsPartialFiles)
        #expect(player("PARTYRADIO_MEDIA_CACHE_PARTIAL", "1").playsPartialFiles)
        #expect(!player("PARTYRADIO_PLAYER_PAGEOUT", "0").releasesStartupPages)
        #expect(player("PARTYRADIO_PLAYER_PAGEOUT", "1").releasesStartupPages)
        // name=value pairs, the last of a name winning; a pair without `=` is left out.
        #expect(
            player("PARTYRADIO_MPV_OPTIONS", "pulse-latency-hacks=no,ao=alsa,audio-device=alsa/pulse,x,ao=pulse")
                .mpvOptions == ["pulse-latency-hacks": "no", "ao": "pulse", "audio-device": "alsa/pulse"])
        // The request: milliseconds, 0 and below the server's, nonsense the default.
        #expect(player("PARTYRADIO_PULSE_REQUEST_MS", "40").pulseRequestMs == 40)
        #expect(player("PARTYRADIO_PULSE_REQUEST_MS", "-5").pulseRequestMs == 0)
        #expect(player("PARTYRADIO_PULSE_REQUEST_MS", "fast").pulseRequestMs == 50)
        // Timing reports: 0-1000 ms, anything else the default.
        #expect(player("PARTYRADIO_PULSE_TIMING_MS", "0").pulseTimingReuseMs == 0)
        #expect(player("PARTYRADIO_PULSE_TIMING_MS", "100").pulseTimingReuseMs == 100)
        for nonsense in ["-1", "1001", "soon"] {
            #expect(player("PARTYRADIO_PULSE_TIMING_MS", nonsense).pulseTimingReuseMs == 250, "\(nonsense)")
        }
    }

    @Test func theTableNamesEachVariableOnceAndSaysWhatItDoes() {
        let names = EnvironmentKnobs.table.map(\.name)
        #expect(Set(names).count == names.count)
        for knob in EnvironmentKnobs.table {
            #expect(knob.name.hasPrefix("PARTYRADIO_") && knob.name.allSatisfy { $0.isUppercase || $0 == "_" })
            #expect(!knob.meaning.isEmpty && knob.meaning.hasSuffix(".") && !knob.defaultValue.isEmpty, "\(knob.name)")
        }
    }

    /// Every variable of the table is in the man page's ENVIRONMENT with its default, the
    /// experimental ones under their own heading; and any `PARTYRADIO_*` name the man page (every
    /// help page is in it) mentions is one the table holds.
    @Test func theManPageListsEveryVariable() throws {
        let page = ManPage.render(version: "1.0")
        let start = try #require(page.range(of: "\n.SH ENVIRONMENT\n"))
        let end = try #require(page[start.upperBound...].range(of: "\n.SH "))
        let section = page[start.upperBound..<end.lowerBound]
        let experimental = try #require(section.range(of: "\n.SS Experimental\n"))
        for knob in EnvironmentKnobs.table {
            let row = ".TP\n.B \(knob.name)\n"
            let found = try #require(section.range(of: row), "\(knob.name)")
            let text = section[found.upperBound...].prefix { $0 != "\n" }
            #expect(text.hasSuffix(ManPage.escape("Default: \(knob.defaultValue).")), "\(knob.name)")
            let isExperimental = found.lowerBound > experimental.lowerBound
            #expect(isExperimental == (knob.stability == .experimental), "\(knob.name)")
        }
        let mentioned = Set(page.matches(of: /PARTYRADIO_[A-Z0-9_]*[A-Z0-9]/).map { String($0.output) })
        #expect(mentioned.subtracting(EnvironmentKnobs.table.map(\.name)).isEmpty)
    }

    /// The rule: a `PARTYRADIO_*` variable is read only through the table, so no source file but
    /// the table's names one in a string literal (the fuzzer's entry point, a program of its own,
    /// picks its harness with `PARTYRADIO_FUZZ_TARGET`).
    @Test func noVariableIsReadOutsideTheTable() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources")
        let allowed = ["CLI/PartyRadioCLI/Config/EnvironmentKnobs.swift", "Fuzz/partyradio-fuzz/Entry.swift"]
        let files = try FileManager.default.subpathsOfDirectory(atPath: sources.path)
        var scanned = 0
        for path in files where [".swift", ".c", ".h"].contains(where: path.hasSuffix) && !allowed.contains(path) {
            let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
            scanned += 1
            for line in text.split(separator: "\n") where line.contains("\"PARTYRADIO_") {
                Issue.record("Sources/\(path) names a PARTYRADIO_ variable outside the table: \(line)")
            }
        }
        #expect(scanned > 100)
    }

    /// The environment is the command's: `main` reads the process's once and hands it down (the
    /// knobs, `PULSE_SERVER`, `DBUS_SESSION_BUS_ADDRESS`, the locale), so that a command run in
    /// process by a test sees only the environment it was given. No other file reads it.
    @Test func nothingButMainReadsTheProcessEnvironment() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources")
        // The benchmarks and the fuzzer are programs of their own, in no product; libcurl reads its
        // proxy variables from the process itself, and `CurlHandle` keeps its no_proxy the same.
        let allowed = [
            "App/partyradio/main.swift", "Fuzz/partyradio-fuzz/Entry.swift", "Adapters/PartyRadioCurl/CurlHandle.swift",
        ]
        let files = try FileManager.default.subpathsOfDirectory(atPath: sources.path)
        for path in files where path.hasSuffix(".swift") && !allowed.contains(path) && !path.hasPrefix("Bench/") {
            let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
            for line in text.split(separator: "\n")
            where line.contains("processInfo.environment") || line.contains("getenv(") {
                Issue.record("Sources/\(path) reads the process environment: \(line)")
            }
        }
    }
}

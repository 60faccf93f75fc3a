import Testing

@testable import PartyRadioMedia

/// libmpv is loaded with dlopen at the first player, not linked (docs/MEDIA.md).
@Suite("libmpv loader")
struct MpvLibraryTests {
    @Test("Loads the installed libmpv, once, and again at once")
    func loads() throws {
        try MpvLibrary.load()
        #expect(MpvLibrary.isLoaded)
        try MpvLibrary.load()
        #expect(MpvLibrary.soname == "libmpv.so.2")
    }

    @Test("A library that is not there is one clear sentence with the fix, and the loaded one stays")
    func missingLibrary() throws {
        let error = #expect(throws: PlayerError.self) {
            try MpvLibrary.load(soname: "libmpv-partyradio-missing.so.9")
        }
        #expect(error?.libraryMissing == true)
        let description = error?.description ?? ""
        #expect(description.hasPrefix("libmpv is not installed: sudo apt install libmpv2 ("))
        #expect(description.contains("libmpv-partyradio-missing.so.9"))
        #expect(!description.contains("\n"))
        // A failed attempt does not unload or replace the real one.
        try MpvLibrary.load()
        #expect(MpvLibrary.isLoaded)
    }

    @Test("A library without mpv's functions is refused, naming the first one missing")
    func notMpv() throws {
        let error = #expect(throws: PlayerError.self) { try MpvLibrary.load(soname: "libz.so.1") }
        #expect(error?.libraryMissing == true)
        #expect(error?.description.contains("missing mpv_client_api_version") == true)
    }

    @Test("The player works through the loaded table: create, a property, shut down")
    func playerThroughLoader() throws {
        let player = try Player(options: Player.Options(audio: .none))
        defer { player.shutdown() }
        #expect(MpvLibrary.isLoaded)
        #expect(player.isIdle)
        #expect(player.stringProperty("mpv-version")?.hasPrefix("mpv ") == true)
    }
}

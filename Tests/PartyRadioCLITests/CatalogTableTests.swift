import PartyRadioCatalog
import Testing

@testable import PartyRadioCLI

@Suite struct CatalogTableTests {
    @Test func tableAlignsAndMarksMissingPreviews() {
        let tracks = [
            CatalogTrack(
                trackID: "1", title: "Get Lucky", artist: "Daft Punk", album: "RAM", durationMs: 369_629,
                previewURL: "https://p/1.m4a"),
            CatalogTrack(
                trackID: "22", title: "坂本", artist: "Ryuichi", album: nil, durationMs: nil, previewURL: nil),
        ]
        let lines = CatalogTable.render(tracks).split(separator: "\n").map(String.init)
        #expect(lines[0].hasPrefix("#  TITLE"))
        #expect(lines[1].contains("6:09"))
        #expect(lines[2].contains("坂本 *"))
        #expect(lines[2].contains("–"))
        #expect(lines.last == "* no preview: cannot be queued.")
        #expect(CatalogTable.displayWidth("坂本") == 4)
        #expect(CatalogTable.clip("abcdefgh", to: 5) == "abcd…")
        #expect(CatalogTable.duration(59_400) == "0:59")
        #expect(CatalogTable.duration(60_000) == "1:00")
    }
}

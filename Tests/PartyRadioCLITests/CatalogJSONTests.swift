import PartyRadioCatalog
import Testing

@testable import PartyRadioCLI

/// The catalog's JSON is snake_case, like every other command's, and never leaves a key out.
@Suite struct CatalogJSONTests {
    @Test func trackKeysAreSnakeCaseAndMissingValuesNull() {
        let bare = CatalogTrack(trackID: "22", title: "坂本", artist: "Ryuichi")
        #expect(
            CatalogJSON.track(bare).rendered
                == #"{"track_id":"22","title":"坂本","artist":"Ryuichi","album":null,"duration_ms":null,"#
                + #""preview_url":null,"artwork_url":null,"explicit":null}"#)
        let full = CatalogTrack(
            trackID: "1", title: "Get Lucky", artist: "Daft Punk", album: "RAM", durationMs: 369_629,
            previewURL: "https://p/1.m4a", artworkURL: "https://a/1.jpg", isExplicit: false)
        #expect(
            CatalogJSON.track(full).rendered
                == #"{"track_id":"1","title":"Get Lucky","artist":"Daft Punk","album":"RAM","duration_ms":369629,"#
                + #""preview_url":"https://p/1.m4a","artwork_url":"https://a/1.jpg","explicit":false}"#)
    }

    @Test func playlistKeys() {
        let playlist = CatalogPlaylist(playlistID: "pl.1", name: "Essentials")
        #expect(
            CatalogJSON.playlist(playlist).rendered
                == #"{"playlist_id":"pl.1","name":"Essentials","curator":null,"artwork_url":null,"url":null}"#)
    }
}

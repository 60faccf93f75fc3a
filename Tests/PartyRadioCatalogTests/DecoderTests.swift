import CatalogTestSupport
import Testing

@testable import PartyRadioCatalog

@Suite struct ITunesDecoderTests {
    @Test func mixedResultsKeepSongsAndExplainTheRest() throws {
        let page = try ITunesDecoder.decode(FixtureServer.fixture("search-daft-punk.json"))
        #expect(page.declaredCount == 10)  // disagrees with the 8 results: ignored
        #expect(page.tracks.map(\.trackID) == ["617154366", "697195462", "1440806061", "1440806000"])
        #expect(page.skipped.count == 4)
        #expect(page.skipped.contains { $0.contains("music-video") })
        #expect(page.skipped.contains { $0.contains("podcast") })
        #expect(page.skipped.contains { $0.contains("no trackId") })
        #expect(page.skipped.contains { $0.contains("no trackName") })

        let lucky = page.tracks[0]
        #expect(lucky.title == "Get Lucky (feat. Pharrell Williams & Nile Rodgers)")
        #expect(lucky.artist == "Daft Punk")
        #expect(lucky.album == "Random Access Memories")
        #expect(lucky.durationMs == 369_629)
        #expect(lucky.previewURL?.hasSuffix(".m4a") == true)
        #expect(lucky.artworkURL?.hasSuffix("/600x600bb.jpg") == true)
        #expect(lucky.isExplicit == false)
        #expect(lucky.queueTrack?.source == lucky.previewURL)

        let stringIDs = page.tracks[1]
        #expect(stringIDs.durationMs == 320_357)  // "320357" as a string

        let bare = page.tracks[2]
        #expect(bare.previewURL == nil && bare.artworkURL == nil && bare.album == nil && bare.durationMs == nil)
        #expect(!bare.isPlayable && bare.queueTrack == nil)

        let floaty = page.tracks[3]
        #expect(floaty.artist == "Unknown Artist")
        #expect(floaty.isExplicit == true)
        #expect(floaty.artworkURL == "https://is1-ssl.mzstatic.com/image/thumb/Music/v4/aa/bb/cc/ram.jpg/600x600bb.jpg")
    }

    /// A catalog answer (a hostile `--itunes-url`, a proxy) whose preview is not an `http(s)` URL:
    /// the song has no preview, so it is never queued nor handed to a player.
    @Test func aPreviewThatIsNotAWebAddressIsNoPreview() throws {
        let previews = [
            "file:///etc/passwd", "/etc/passwd", "av://lavfi:sine", "memory://x", "http://user:pw@host/a.m4a",
            "https://audio.example/a b.m4a",
        ]
        for preview in previews {
            let result = #"{"kind":"song","trackId":1,"trackName":"T","previewUrl":"\#(preview)"}"#
            let json = #"{"resultCount":1,"results":["# + result + "]}"
            let track = try #require(try ITunesDecoder.decode(Array(json.utf8)).tracks.first)
            #expect(track.previewURL == nil && !track.isPlayable && track.queueTrack == nil, "\(preview)")
        }
        let good = CatalogTrack(trackID: "1", title: "T", artist: "A", previewURL: "https://audio.example/p.m4a")
        #expect(good.queueTrack?.source == "https://audio.example/p.m4a")
    }

    @Test func unicodeSurvives() throws {
        let page = try ITunesDecoder.decode(FixtureServer.fixture("search-unicode.json"), artworkSize: 300)
        #expect(page.tracks.map(\.artist) == ["Beyoncé", "坂本龍一", "Sigur Rós"])
        #expect(page.tracks[1].album == "音楽図鑑")
        #expect(page.tracks[2].title == "Untitled 🎵 #1 \"Vaka\"")
        #expect(page.tracks[0].artworkURL?.hasSuffix("/300x300bb.jpg") == true)
        #expect(page.tracks[2].isExplicit == false)  // "cleaned"
    }

    @Test func lookupDropsArtistsAndAlbums() throws {
        let page = try ITunesDecoder.decode(FixtureServer.fixture("lookup-tracks.json"))
        #expect(page.tracks.count == 3)
        #expect(page.skipped.count == 2)
        #expect(page.skipped.allSatisfy { $0.contains("wrapperType") })
    }

    @Test func errorBodiesReadWell() {
        #expect(throws: CatalogError.self) { try ITunesDecoder.decode(Array("".utf8)) }
        let html = Array("<!DOCTYPE html><html><head><title>Service Unavailable</title></head></html>".utf8)
        #expect(throws: CatalogError.self) { try ITunesDecoder.decode(html) }
        do {
            _ = try ITunesDecoder.decode(html)
        } catch {
            #expect(error.code == .badResponse)
            #expect(error.message.contains("'Service Unavailable'"))
            #expect(error.message.contains("instead of JSON"))
        }
        do {
            _ = try ITunesDecoder.decode(Array("{\"resultCount\":1,\"results\":[{\"trackId\":1".utf8))
            Issue.record("truncated body decoded")
        } catch {
            #expect(error.message.contains("cut off"))
        }
        do {
            _ = try ITunesDecoder.decode(Array("{\"errorMessage\":\"Invalid value(s) for key(s): [country]\"}".utf8))
            Issue.record("error document decoded")
        } catch {
            #expect(error.message.contains("Invalid value(s) for key(s): [country]"))
        }
        do {
            _ = try ITunesDecoder.decode(Array("{\"results\":{}}".utf8))
            Issue.record("wrong shape decoded")
        } catch {
            #expect(error.message.contains("'results'"))
        }
        do {
            _ = try ITunesDecoder.decode(Array("{\"a\":1,,}".utf8))
            Issue.record("malformed decoded")
        } catch {
            #expect(error.message.contains("malformed JSON"))
        }
    }
}

@Suite struct ChartFeedDecoderTests {
    @Test func classicFeedShape() throws {
        let page = try ChartFeedDecoder.decode(FixtureServer.fixture("topsongs-us.json"))
        #expect(page.tracks.map(\.trackID) == ["1739079976", "1762657022", "1781270319"])
        #expect(page.skipped == ["entry 3: not a song (content type 'Music Video')"])
        let espresso = page.tracks[0]
        #expect(espresso.title == "Espresso")
        #expect(espresso.artist == "Sabrina Carpenter")
        #expect(espresso.album == "Espresso - Single")
        #expect(espresso.previewURL == "https://audio-ssl.itunes.apple.com/itunes-assets/AudioPreview211/espresso.m4a")
        #expect(
            espresso.artworkURL == "https://is1-ssl.mzstatic.com/image/thumb/Music211/v4/espresso.jpg/600x600bb.png")
        let smile = page.tracks[1]  // ID only in the store URL, one link object, no preview
        #expect(smile.previewURL == nil)
        #expect(smile.artworkURL?.hasSuffix("600x600bb.png") == true)
        #expect(page.tracks[2].previewURL?.hasSuffix("luther.m4a") == true)
    }

    @Test func singleEntryIsAnObjectNotAnArray() throws {
        let body = """
            {"feed":{"entry":{"im:name":{"label":"Solo"},"id":{"attributes":{"im:id":"7"}},"im:artist":{"label":"A"}}}}
            """
        let page = try ChartFeedDecoder.decode(Array(body.utf8))
        #expect(page.tracks.map(\.title) == ["Solo"])
    }

    @Test func emptyFeedAndWrongShape() throws {
        #expect(try ChartFeedDecoder.decode(Array("{\"feed\":{\"title\":{\"label\":\"x\"}}}".utf8)).tracks.isEmpty)
        #expect(throws: CatalogError.self) { try ChartFeedDecoder.decode(Array("{\"resultCount\":0}".utf8)) }
    }
}

@Suite struct AppleMusicDecoderTests {
    @Test func searchSongsAndPlaylists() throws {
        let page = try AppleMusicDecoder.decode(FixtureServer.fixture("applemusic-search.json"))
        #expect(page.tracks.map(\.trackID) == ["617154366", "697195462"])
        #expect(page.skipped == ["song 3: not a song (type 'music-videos')"])
        #expect(
            page.tracks[0].artworkURL == "https://is1-ssl.mzstatic.com/image/thumb/Music125/v4/ram.jpg/600x600bb.jpg")
        #expect(page.tracks[0].durationMs == 369_629)
        #expect(page.tracks[1].previewURL == nil)
        #expect(page.tracks[1].isExplicit == true)
        #expect(page.playlists.map(\.name) == ["Daft Punk Essentials"])
        #expect(page.playlists[0].curator == "Apple Music Electronic")
        #expect(page.playlists[0].artworkURL?.hasSuffix("600x600cc.jpg") == true)
    }

    @Test func errorsDocument() {
        let body = #"{"errors":[{"id":"X","title":"Unauthorized","detail":"Invalid authentication","status":"401"}]}"#
        do {
            _ = try AppleMusicDecoder.decode(Array(body.utf8))
            Issue.record("errors decoded")
        } catch {
            #expect(error.message == "The Apple Music API answered Unauthorized (401): Invalid authentication")
        }
    }

    @Test func playlistWithTracks() throws {
        let body = #"""
            {"data":[{"id":"pl.1","type":"playlists","attributes":{"name":"P"},"relationships":{"tracks":{"data":[
              {"id":"5","type":"songs","attributes":{"name":"A","artistName":"B","previews":[{"url":"https://p/a.m4a"}]}},
              {"id":"6","type":"music-videos","attributes":{"name":"V"}}]}}}]}
            """#
        let page = try AppleMusicDecoder.decode(Array(body.utf8))
        #expect(page.tracks.map(\.trackID) == ["5"])
        #expect(page.tracks[0].previewURL == "https://p/a.m4a")
    }
}

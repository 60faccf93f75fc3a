import CatalogTestSupport
import Foundation
import Testing

@testable import PartyRadioCLI

@Suite struct CatalogCommandTests {
    @Test func helpGoesToStdoutWithExitZero() async {
        let run = await runCLI("search", ["--help"])
        #expect(run.code == 0)
        #expect(run.out.hasPrefix("OVERVIEW: Search Apple's catalog"))
        #expect(run.err.isEmpty)
    }

    @Test func usageErrorsExitTwoWithAHint() async {
        let run = await runCLI("search", ["x", "--limit", "500"])
        #expect(run.code == 2)
        #expect(run.out.isEmpty)
        #expect(
            run.err
                == "Error: '--limit' takes a whole number from 1 to 200; got '500'.\nSee 'partyradio search --help'.")
    }

    @Test func searchPrintsATable() async {
        let run = await runCLI("search", ["daft", "punk"])
        #expect(run.code == 0)
        #expect(run.out.contains("Get Lucky"))
        #expect(run.out.contains("617154366"))
        #expect(run.out.contains("* no preview: cannot be queued."))
        #expect(run.out.contains("4 songs · 4 left out"))
    }

    @Test func searchJSONIsMachineReadable() async throws {
        let run = await runCLI("search", ["unicode", "--json", "--country", "jp", "--no-explicit"])
        #expect(run.code == 0)
        let json = run.json
        #expect(json["count"] as? Int == 3)
        #expect(json["country"] as? String == "jp")
        #expect(json["explicit"] as? Bool == false)
        #expect(json["source"] as? String == "itunes")
        // `playlists` only with --apple-music, where playlists can be asked for.
        #expect(
            Set(json.keys) == [
                "source", "term", "country", "limit", "explicit", "cached", "age_seconds", "count", "tracks",
                "skipped", "notices",
            ])
        let tracks = try #require(json["tracks"] as? [[String: Any]])
        #expect(tracks[1]["artist"] as? String == "坂本龍一")
        #expect(tracks[2]["artwork_url"] is NSNull)  // missing values are null, never absent
        #expect(
            Set(tracks[0].keys) == [
                "track_id", "title", "artist", "album", "duration_ms", "preview_url", "artwork_url", "explicit",
            ])
    }

    @Test func secondRunComesFromTheCache() async throws {
        let server = try FixtureServer()
        let state = makeTemporaryDirectory()
        let first = await runCLI("search", ["daft punk", "--json"], server: server, stateDir: state)
        #expect(first.json["cached"] as? Bool == false)
        server.stop()
        let second = await runCLI("search", ["daft punk", "--json"], server: server, stateDir: state)
        #expect(second.code == 0)
        #expect(second.json["cached"] as? Bool == true)
        #expect(FileManager.default.fileExists(atPath: state + "/partyradio/catalog-cache.sqlite"))
        let refreshed = await runCLI("search", ["daft punk", "--refresh"], server: server, stateDir: state)
        #expect(refreshed.code == 1)
        #expect(refreshed.err.hasPrefix("Error: Cannot connect to 127.0.0.1:"))
        #expect(refreshed.err.hasSuffix("See 'partyradio search --help'."))
    }

    @Test func runtimeFailuresExitOne() async {
        let failed = await runCLI("search", ["servererror"])
        #expect(failed.code == 1)
        #expect(failed.err.hasPrefix("Error: The iTunes Search API failed on its side (HTTP 500); try again later."))
        let html = await runCLI("charts", ["--country", "xx"])
        #expect(html.code == 1)
        #expect(html.err.contains("HTTP 400"))
    }

    @Test func lookupAndMissingIDs() async throws {
        let run = await runCLI("lookup", ["697195462", "999", "617154366"])
        #expect(run.code == 0)
        #expect(run.err.contains("not found in the us store: 999"))
        let lines = run.out.split(separator: "\n")
        #expect(lines[1].contains("One More Time"))
        #expect(lines[2].contains("Get Lucky"))
        let json = await runCLI("lookup", ["697195462,999", "--json"]).json
        #expect(json["missing"] as? [String] == ["999"])
        #expect(
            Set(json.keys) == ["ids", "country", "cached", "age_seconds", "count", "tracks", "missing", "notices"])
        let none = await runCLI("lookup", ["999"])
        #expect(none.code == 1)
        #expect(none.err.hasPrefix("Error: No songs with ID 999 in the us store"))
    }

    @Test func charts() async throws {
        let run = await runCLI("charts", ["--limit", "4"])
        #expect(run.code == 0)
        #expect(run.out.contains("Espresso"))
        let json = await runCLI("charts", ["--country", "de", "--limit", "12", "--json"]).json
        #expect(json["count"] as? Int == 12)
        #expect(
            Set(json.keys) == ["country", "limit", "cached", "age_seconds", "count", "tracks", "skipped", "notices"])
    }

    @Test func tokenCommand() async throws {
        let key = try makeP8Key()
        let base = ["--key", key, "--team", "ABCDE12345", "--key-id", "KEY1234567"]
        let run = await runCLI("token", base + ["--ttl", "180"])
        #expect(run.code == 0)
        #expect(run.out.split(separator: ".").count == 3)
        #expect(run.err.contains("valid until"))
        let json = await runCLI("token", base + ["--json", "--ttl", "7"]).json
        let issued = try #require(json["issued_at"] as? Int)
        #expect(json["expires_at"] as? Int == issued + 7 * 86_400)
        #expect(json["team_id"] as? String == "ABCDE12345")
        #expect(json["key_id"] as? String == "KEY1234567")
        #expect(Set(json.keys) == ["token", "team_id", "key_id", "issued_at", "expires_at", "expires"])

        let tooLong = await runCLI("token", base + ["--ttl", "181"])
        #expect(tooLong.code == 2)
        #expect(tooLong.err.contains("at most 180 days"))

        let wrongCurve = await runCLI("token", ["--key", try makeP8Key(curve: "P-384")] + base.dropFirst(2))
        #expect(wrongCurve.code == 1)
        #expect(wrongCurve.err.contains("not an EC P-256 key"))
        let missing = await runCLI("token", ["--key", "/nonexistent.p8"] + base.dropFirst(2))
        #expect(missing.code == 1)
        #expect(missing.err.contains("Cannot read the key file"))
    }

    @Test func appleMusicSearchWithAKey() async throws {
        let key = try makeP8Key()
        let run = await runCLI(
            "search",
            [
                "--apple-music", "--types", "songs,playlists", "--key", key, "--team", "ABCDE12345",
                "--key-id", "KEY1234567", "daft", "punk",
            ])
        #expect(run.code == 0, "\(run.err)")
        #expect(run.out.contains("Get Lucky"))
        #expect(run.out.contains("Daft Punk Essentials"))
        let searchJSON = await runCLI(
            "search", ["--apple-music", "--types", "songs,playlists", "--developer-token", "a.b.c", "daft", "--json"])
        #expect(searchJSON.code == 0, "\(searchJSON.err)")
        #expect(searchJSON.json["source"] as? String == "apple-music")
        let playlists = try #require(searchJSON.json["playlists"] as? [[String: Any]])
        #expect(Set(try #require(playlists.first).keys) == ["playlist_id", "name", "curator", "artwork_url", "url"])
        let playlist = await runCLI(
            "lookup", ["--apple-music", "--developer-token", "a.b.c", "--playlist", "pl.4ae23f69b1a54ae0", "--json"])
        #expect(playlist.code == 0, "\(playlist.err)")
        #expect(playlist.json["count"] as? Int == 2)
        let songs = await runCLI("lookup", ["--apple-music", "--developer-token", "a.b.c", "697195462"])
        #expect(songs.out.contains("One More Time"))
        let refused = await runCLI("search", ["--apple-music", "--developer-token", "bad.x.y", "daft"])
        #expect(refused.code == 1)
        #expect(refused.err.contains("refused the token (HTTP 401: Unauthorized"))
    }

    @Test func unusableStateDirIsAWarningNotAFailure() async {
        let run = await runCLI("search", ["daft punk", "--state-dir", "/proc/nope"])
        #expect(run.code == 0)
        #expect(run.err.hasPrefix("Warning: Cannot create the state directory"))
    }
}

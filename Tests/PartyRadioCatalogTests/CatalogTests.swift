import CatalogTestSupport
import Synchronization
import Testing

@testable import PartyRadioCatalog

/// Records back-off waits instead of sleeping.
final class SleepRecorder: Sendable {
    let waits = Mutex<[Double]>([])
    var recorded: [Double] { waits.withLock { $0 } }
    var sleep: @Sendable (Double) async -> Void { { seconds in self.waits.withLock { $0.append(seconds) } } }
}

func fixtureCatalog(
    _ server: FixtureServer = .shared, cache: CatalogCache? = nil, sleeper: SleepRecorder = SleepRecorder(),
    clock: @escaping @Sendable () -> Double = Catalog.systemTime
) -> Catalog {
    Catalog(
        configuration: CatalogConfiguration(
            endpoints: CatalogEndpoints(iTunesBaseURL: server.baseURL, appleMusicBaseURL: server.baseURL), timeout: 5),
        cache: cache, clock: clock, sleep: sleeper.sleep)
}

@Suite struct CatalogTests {
    let server = FixtureServer.shared

    @Test func searchReturnsSongsReadyForTheQueue() async throws {
        let tracks = try await fixtureCatalog().search("daft punk", country: "us", limit: 50)
        #expect(tracks.count == 4)
        #expect(tracks.compactMap(\.queueTrack).count == 3)
    }

    @Test func termIsEncodedOnTheWire() async throws {
        let result = try await fixtureCatalog().searchResult(
            "echo Beyoncé & AC/DC+1", country: "gb", limit: 7,
            allowExplicit: false)
        let query = try #require(result.tracks.first?.title)
        #expect(
            query == "term=echo+Beyonc%C3%A9+%26+AC%2FDC%2B1&media=music&entity=song&limit=7&country=gb&explicit=No")
        #expect(result.tracks.first?.album == "echo Beyoncé & AC/DC+1")  // what the server decoded
    }

    @Test func twoHundredResults() async throws {
        let tracks = try await fixtureCatalog().search("big", limit: 200)
        #expect(tracks.count == 200)
        #expect(Set(tracks.map(\.trackID)).count == 200)
    }

    @Test func lookupKeepsTheOrderAsked() async throws {
        let catalog = fixtureCatalog()
        let tracks = try await catalog.lookup(["697195462", "1440935467", "617154366", "5468295", "999"])
        #expect(tracks.map(\.trackID) == ["697195462", "1440935467", "617154366"])
    }

    @Test func chartsFromTheFeed() async throws {
        let catalog = fixtureCatalog()
        let us = try await catalog.topSongs(country: "us", limit: 4)
        #expect(us.tracks.map(\.title) == ["Espresso", "Die With A Smile", "Luther"])
        let gb = try await catalog.topSongs(country: "gb", limit: 30)
        #expect(gb.tracks.count == 30)
        #expect(gb.tracks[0].title == "Chart Song 1 (gb)")
        #expect(gb.tracks[0].artworkURL?.hasSuffix("600x600bb.png") == true)
        let one = try await catalog.topSongs(country: "fr", limit: 1)  // the feed drops the array
        #expect(one.tracks.count == 1)
    }

    @Test func forbiddenIsRateLimitingWithBackOff() async {
        let sleeper = SleepRecorder()
        do {
            _ = try await fixtureCatalog(sleeper: sleeper).searchResult("forbidden")
            Issue.record("403 accepted")
        } catch {
            #expect(error.code == .rateLimited)
            #expect(error.status == 403)
            #expect(error.message.contains("3 attempts"))
        }
        #expect(sleeper.recorded == [1, 2])
    }

    @Test func longRetryAfterFailsAtOnceSayingHowLong() async {
        let sleeper = SleepRecorder()
        do {
            _ = try await fixtureCatalog(sleeper: sleeper).searchResult("ratelimited")
            Issue.record("429 accepted")
        } catch {
            #expect(error.code == .rateLimited)
            #expect(error.retryAfter == 120)
            #expect(error.message.contains("wait 2 minutes"))
        }
        #expect(sleeper.recorded.isEmpty)
    }

    @Test func shortRetryAfterIsWaitedOut() async throws {
        let sleeper = SleepRecorder()
        let tracks = try await fixtureCatalog(sleeper: sleeper).search("flaky429-2")
        #expect(tracks.count == 4)
        #expect(sleeper.recorded == [0, 0])
    }

    @Test(arguments: [
        ("servererror", "failed on its side (HTTP 500)"),
        ("html", "sent a web page ('Service Unavailable - Zero size object') instead of JSON"),
        ("malformed", "malformed JSON"),
        ("cutoff", "cut off"),
        ("notfound", "(HTTP 404); check --itunes-url"),
    ])
    func badAnswersReadWell(term: String, phrase: String) async {
        do {
            _ = try await fixtureCatalog().searchResult(term)
            Issue.record("\(term) accepted")
        } catch {
            #expect(error.message.contains(phrase), "\(error.message)")
        }
    }

    @Test func badCountryUsesApplesOwnWords() async {
        do {
            _ = try await fixtureCatalog().searchResult("x", country: "zz")
            Issue.record("bad country accepted")
        } catch {
            #expect(error.message.contains("HTTP 400"))
            #expect(error.message.contains("Invalid value(s) for key(s): [country]"))
        }
    }

    @Test func appleMusicNeedsAToken() async throws {
        let catalog = fixtureCatalog()
        do {
            _ = try await catalog.appleMusicSearch("daft punk", credentials: .init(developerToken: "bad.x.y"))
            Issue.record("bad token accepted")
        } catch {
            #expect(error.code == .unauthorized)
            #expect(error.message.contains("(HTTP 401: Unauthorized: Invalid authentication)"))
            #expect(error.message.contains("partyradio token"))
        }
        let result = try await catalog.appleMusicSearch(
            "daft punk", types: ["songs", "playlists"], credentials: .init(developerToken: "a.b.c"))
        #expect(result.tracks.count == 2)
        #expect(result.page.playlists.count == 1)
        let personal = try await catalog.appleMusicSearch(
            "daft punk", credentials: .init(developerToken: "a.b.c", musicUserToken: "user"))
        #expect(personal.tracks.first?.title == "For You")
        let clean = try await catalog.appleMusicSearch(
            "daft punk", allowExplicit: false, credentials: .init(developerToken: "a.b.c"))
        #expect(clean.tracks.map(\.title) == ["Get Lucky (feat. Pharrell Williams & Nile Rodgers)"])
        #expect(clean.page.skipped.contains("song 697195462: explicit (clean mode)"))
        #expect(personal.page.playlists.isEmpty)
    }

    @Test func appleMusicSongsAndPlaylists() async throws {
        let catalog = fixtureCatalog()
        let credentials = AppleMusicCredentials(developerToken: "a.b.c")
        let songs = try await catalog.appleMusicSongs(["697195462"], credentials: credentials)
        #expect(songs.tracks.map(\.title) == ["One More Time"])
        let playlist = try await catalog.appleMusicPlaylist("pl.abc", credentials: credentials)
        #expect(playlist.tracks.count == 2)
    }
}

@Suite struct CatalogCacheTests {
    @Test func repeatedSearchAnswersWithoutTheNetwork() async throws {
        let server = try FixtureServer()
        let directory = temporaryDirectory()
        let catalog = fixtureCatalog(server, cache: try CatalogCache(stateDirectory: directory))
        let first = try await catalog.searchResult("daft punk")
        #expect(!first.fromCache)
        let second = try await catalog.searchResult("daft punk")
        #expect(second.fromCache)
        #expect(second.tracks == first.tracks)
        #expect(try await server.searchCount("daft punk") == 1)

        let refreshed = try await catalog.searchResult("daft punk", refresh: true)
        #expect(!refreshed.fromCache)
        #expect(try await server.searchCount("daft punk") == 2)

        server.stop()  // no network at all now
        let offline = try await fixtureCatalog(server, cache: try CatalogCache(stateDirectory: directory))
            .searchResult("daft punk")
        #expect(offline.fromCache)
        #expect(offline.tracks.count == 4)
    }

    @Test func expiredEntriesAreFetchedAgainOrServedStaleWhenOffline() async throws {
        let server = try FixtureServer()
        let directory = temporaryDirectory()
        let now = Mutex<Double>(1_000_000)
        let clock: @Sendable () -> Double = { now.withLock { $0 } }
        let catalog = fixtureCatalog(server, cache: try CatalogCache(stateDirectory: directory), clock: clock)
        _ = try await catalog.searchResult("daft punk")
        now.withLock { $0 += 3601 }
        let again = try await catalog.searchResult("daft punk")
        #expect(!again.fromCache)
        #expect(try await server.searchCount("daft punk") == 2)

        now.withLock { $0 += 7200 }
        server.stop()
        let stale = try await catalog.searchResult("daft punk")
        #expect(stale.fromCache)
        #expect(stale.age == 7200)
        #expect(stale.notices.count == 1)
        #expect(stale.notices[0].contains("cached 2 hours ago"))
    }

    @Test func badAnswersLeaveTheCacheUntouched() async throws {
        let directory = temporaryDirectory()
        let cache = try CatalogCache(stateDirectory: directory)
        let catalog = fixtureCatalog(cache: cache)
        await #expect(throws: CatalogError.self) { try await catalog.searchResult("html") }
        let url = catalog.configuration.endpoints.search(term: "html", country: "us", limit: 50, allowExplicit: true)
        #expect(cache.lookup("GET " + url, now: Int(Catalog.systemTime())) == .miss)
    }

    @Test func corruptFileIsReportedMovedAsideAndRebuilt() async throws {
        let directory = temporaryDirectory()
        let path = directory + "/" + CatalogCache.fileName
        let garbage = [UInt8](repeating: 0x5A, count: 8192)
        try writeFile(path, garbage)
        let cache = try CatalogCache(stateDirectory: directory)
        let notices = cache.takeNotices()
        #expect(notices.count == 1)
        #expect(notices[0].contains("was corrupt"))
        #expect(notices[0].contains(".corrupt"))
        #expect(try readFile(path + ".corrupt") == garbage)  // kept for inspection, not overwritten
        let result = try await fixtureCatalog(cache: cache).searchResult("daft punk")
        #expect(!result.fromCache)
        #expect(try await fixtureCatalog(cache: cache).searchResult("daft punk").fromCache)
    }

    @Test func damagedEntryIsNeverServed() async throws {
        let directory = temporaryDirectory()
        let cache = try CatalogCache(stateDirectory: directory)
        let catalog = fixtureCatalog(cache: cache)
        _ = try await catalog.searchResult("unicode")
        _ = try await catalog.searchResult("empty")  // an undamaged neighbour
        try damageEveryBody(directory + "/" + CatalogCache.fileName)
        let again = try await catalog.searchResult("unicode")
        #expect(!again.fromCache)
        #expect(
            again.notices == [
                "A cached answer in \(cache.path) was damaged (checksum mismatch); it was dropped and fetched again."
            ])
        #expect(try await catalog.searchResult("empty").fromCache)  // the rest of the cache survives
        #expect(again.tracks.map(\.artist) == ["Beyoncé", "坂本龍一", "Sigur Rós"])
    }

    @Test func unwritableStateDirectoryIsAClearError() {
        do {
            _ = try CatalogCache(stateDirectory: "/proc/partyradio-cannot-exist")
            Issue.record("cache made in /proc")
        } catch {
            #expect(error.code == .cache)
            #expect(error.message.contains("--state-dir"))
        }
    }
}

@Suite struct CatalogWithCacheTests {
    @Test func theDJsWayIn() async throws {
        let server = FixtureServer.shared
        let directory = temporaryDirectory()
        let (catalog, notices) = Catalog.withCache(
            stateDirectory: directory, endpoints: CatalogEndpoints(iTunesBaseURL: server.baseURL))
        #expect(notices.isEmpty)
        #expect(catalog.configuration.endpoints.iTunesBaseURL == server.baseURL)
        let queue = try await catalog.search("daft punk", country: "us", limit: 10, allowExplicit: false)
            .compactMap(\.queueTrack)
        #expect(queue.count == 3)
        #expect(queue[0].source.hasSuffix(".m4a"))
        let added = try await catalog.lookup(["617154366"])
        #expect(added.first?.queueTrack?.id == "617154366")

        let (fallback, warnings) = Catalog.withCache(stateDirectory: "/proc/none", endpoints: CatalogEndpoints())
        #expect(fallback.configuration.endpoints.iTunesBaseURL == "https://itunes.apple.com")
        #expect(warnings.count == 1)
    }
}

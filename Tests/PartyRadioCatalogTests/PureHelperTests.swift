import PartyRadioCurl
import Testing

@testable import PartyRadioCatalog

@Suite struct ArtworkURLTests {
    let base = "https://is1-ssl.mzstatic.com/image/thumb/Music125/v4/28/1e/a1/x/886443919266.jpg/"

    @Test func searchArtworkTo600() {
        #expect(ArtworkURL.resized(base + "100x100bb.jpg") == base + "600x600bb.jpg")
        #expect(ArtworkURL.resized(base + "30x30bb.jpg", width: 1200) == base + "1200x1200bb.jpg")
        #expect(ArtworkURL.resized(base + "100x100bb.jpg", width: 640, height: 480) == base + "640x480bb.jpg")
        #expect(ArtworkURL.resized(base + "170x170bb.png?x=1") == base + "600x600bb.png?x=1")
        #expect(ArtworkURL.resized("http://a1.mzstatic.com/us/r30/Music/x/y.100x100-75.jpg") == nil)
        #expect(ArtworkURL.resized("https://host/img/100x100-75.jpg") == "https://host/img/600x600-75.jpg")
    }

    @Test func templatesAndNonSizes() {
        #expect(ArtworkURL.resized("https://h/a/{w}x{h}bb.jpg", width: 500) == "https://h/a/500x500bb.jpg")
        #expect(ArtworkURL.resized("https://h/a/cover.jpg") == nil)
        #expect(ArtworkURL.resizedOrOriginal("https://h/a/cover.jpg") == "https://h/a/cover.jpg")
        #expect(ArtworkURL.resized("https://h/a/100xbb.jpg") == nil)
        #expect(ArtworkURL.resized(base + "100x100bb.jpg", width: 0) == nil)
        #expect(ArtworkURL.resized("") == nil)
    }
}

@Suite struct QueryEncodingTests {
    @Test func appleDocumentedEncoding() {
        #expect(QueryEncoding.encode("jack johnson") == "jack+johnson")
        #expect(QueryEncoding.encode("AC/DC & Friends") == "AC%2FDC+%26+Friends")
        #expect(QueryEncoding.encode("a+b=c?d#e") == "a%2Bb%3Dc%3Fd%23e")
        #expect(QueryEncoding.encode("Beyoncé") == "Beyonc%C3%A9")
        #expect(QueryEncoding.encode("坂本") == "%E5%9D%82%E6%9C%AC")
        #expect(QueryEncoding.encode("keep.-_*") == "keep.-_*")
        #expect(QueryEncoding.encode("~'!") == "%7E%27%21")
        for text in ["jack johnson", "AC/DC & Friends", "Beyoncé 🎵", "100% + more"] {
            #expect(QueryEncoding.decode(QueryEncoding.encode(text)) == text)
        }
        #expect(QueryEncoding.decode("%G1") == nil)
    }

    @Test func endpoints() {
        let endpoints = CatalogEndpoints(iTunesBaseURL: "http://127.0.0.1:9/", appleMusicBaseURL: "http://127.0.0.1:9")
        #expect(
            endpoints.search(term: "daft punk", country: "gb", limit: 20, allowExplicit: false)
                == "http://127.0.0.1:9/search?term=daft+punk&media=music&entity=song&limit=20&country=gb&explicit=No")
        #expect(
            endpoints.search(term: "a&b", country: "us", limit: 50, allowExplicit: true)
                == "http://127.0.0.1:9/search?term=a%26b&media=music&entity=song&limit=50&country=us")
        #expect(endpoints.lookup(ids: ["1", "2"], country: "us") == "http://127.0.0.1:9/lookup?id=1,2&country=us")
        #expect(endpoints.topSongs(country: "fr", limit: 10) == "http://127.0.0.1:9/fr/rss/topsongs/limit=10/json")
        #expect(
            endpoints.appleMusicSearch(term: "daft punk", storefront: "us", types: ["songs", "playlists"], limit: 5)
                == "http://127.0.0.1:9/v1/catalog/us/search?term=daft+punk&types=songs,playlists&limit=5")
        #expect(CatalogEndpoints().iTunesBaseURL == "https://itunes.apple.com")
        #expect(CatalogEndpoints().appleMusicBaseURL == "https://api.music.apple.com")
    }

    @Test func storefronts() {
        #expect(Storefront.fromLocale(["LANG": "en_GB.UTF-8"]) == "gb")
        #expect(Storefront.fromLocale(["LC_ALL": "de_DE@euro", "LANG": "en_GB.UTF-8"]) == "de")
        #expect(Storefront.fromLocale(["LC_MESSAGES": "pt-BR"]) == "br")
        #expect(Storefront.fromLocale(["LANG": "C.UTF-8"]) == "us")
        #expect(Storefront.fromLocale(["LANG": "POSIX"]) == "us")
        #expect(Storefront.fromLocale([:]) == "us")
        #expect(Storefront.normalized("GB") == "gb")
        #expect(Storefront.normalized("gbr") == nil)
        #expect(Storefront.normalized("g1") == nil)
    }
}

@Suite struct RetryAndFailureTests {
    @Test func retryPolicy() {
        let policy = RetryPolicy(maximumRetries: 2, maximumWait: 10, baseDelay: 1)
        #expect(policy.decision(retryAfter: nil, attempt: 0) == .retry(after: 1))
        #expect(policy.decision(retryAfter: nil, attempt: 1) == .retry(after: 2))
        #expect(policy.decision(retryAfter: nil, attempt: 2) == .giveUp)
        #expect(policy.decision(retryAfter: 5, attempt: 0) == .retry(after: 5))
        #expect(policy.decision(retryAfter: 120, attempt: 0) == .giveUp)
        #expect(RetryPolicy.none.decision(retryAfter: 0, attempt: 0) == .giveUp)
    }

    @Test func retryAfterForms() {
        #expect(RetryPolicy.retryAfterSeconds("120", now: 0) == 120)
        #expect(RetryPolicy.retryAfterSeconds(" 0 ", now: 0) == 0)
        #expect(RetryPolicy.retryAfterSeconds("Thu, 01 Jan 1970 00:01:40 GMT", now: 40) == 60)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(RetryPolicy.retryAfterSeconds("soon", now: 0) == nil)
    }

    @Test func curlFailuresReadWell() {
        let url = "https://itunes.apple.com/search?term=x"
        let dns = TransferFailure.error(curlCode: 6, url: url, detail: "", timeout: 15)
        #expect(dns.code == .dns && dns.message.contains("'itunes.apple.com'"))
        let connect = TransferFailure.error(curlCode: 7, url: "http://127.0.0.1:9/x", detail: "refused", timeout: 15)
        #expect(connect.code == .connect && connect.message.contains("127.0.0.1:9"))
        let timeout = TransferFailure.error(curlCode: 28, url: url, detail: "", timeout: 2.5)
        #expect(
            timeout.code == .timeout && timeout.message.contains("2.5 seconds") && timeout.message.contains("--timeout")
        )
        #expect(TransferFailure.error(curlCode: 18, url: url, detail: "", timeout: 1).code == .transfer)
        #expect(TransferFailure.error(curlCode: 60, url: url, detail: "", timeout: 1).code == .tls)
        #expect(TransferFailure.error(curlCode: 23, url: url, detail: "", timeout: 1).code == .tooLarge)
        #expect(TransferFailure.error(curlCode: 42, url: url, detail: "", timeout: 1).code == .cancelled)
        #expect(
            TransferFailure.error(curlCode: 999, url: url, detail: "odd", timeout: 1).message.contains("curl error 999")
        )
        #expect(TransferFailure.hostPort(of: "http://user@host:8080/path?q") == "host:8080")
    }

    @Test func failuresKeepTheirCause() {
        let error = TransferFailure.error(curlCode: 7, url: "http://127.0.0.1:9/x", detail: "refused", timeout: 15)
        #expect(error.underlying as? CurlFailure == CurlFailure(code: 7, detail: "refused"))
        #expect(CurlFailure(code: 7, detail: "").description == "curl error 7")
        // The cause is carried, not compared: two errors that say the same thing are equal.
        #expect(error == CatalogError(error.code, error.message))

        do {
            _ = try ResponseBody.json(Array("{\"a\": tru}".utf8), contentType: nil, service: "iTunes")
            Issue.record("malformed JSON accepted")
        } catch {
            #expect(error.code == .badResponse)
            #expect((error.underlying as? JSONParseError)?.isTruncation == false)
        }
    }
}

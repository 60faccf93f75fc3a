// partyradio-bench-catalog: how fast the catalog decodes and how much the cache saves.
//
//   swift run -c release partyradio-bench-catalog [--iterations N] [--itunes-url URL]
//
// Without --itunes-url it starts Tests/Fixtures/catalog_fixture_server.py on 127.0.0.1 (loopback
// only). Prints figures; asserts nothing about them.
import CatalogTestSupport
import Foundation
import PartyRadioCatalog

struct Options {
    var iterations = 50
    var baseURL: String?
}

func parseOptions() -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst().makeIterator()
    while let argument = arguments.next() {
        switch argument {
        case "--iterations":
            options.iterations = arguments.next().flatMap(Int.init).map { max(1, $0) } ?? options.iterations
        case "--itunes-url": options.baseURL = arguments.next()
        case "-h", "--help":
            print("USAGE: partyradio-bench-catalog [--iterations N] [--itunes-url URL]")
            exit(0)
        default:
            FileHandle.standardError.write(Data("Error: unknown argument '\(argument)'.\n".utf8))
            exit(2)
        }
    }
    return options
}

func now() -> Double { Catalog.systemTime() }

/// Median, 90th percentile and minimum of `samples`, in milliseconds.
func summary(_ samples: [Double]) -> String {
    let sorted = samples.sorted()
    func at(_ fraction: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))] }
    return String(
        format: "median %7.3f ms   p90 %7.3f ms   min %7.3f ms   (n=%d)", at(0.5) * 1000, at(0.9) * 1000,
        sorted[0] * 1000, sorted.count)
}

func measure(_ iterations: Int, _ body: () async throws -> Void) async rethrows -> [Double] {
    var samples: [Double] = []
    for _ in 0..<iterations {
        let start = now()
        try await body()
        samples.append(now() - start)
    }
    return samples
}

let options = parseOptions()
var fixture: FixtureServer?
let baseURL: String
if let given = options.baseURL {
    baseURL = given
} else {
    do {
        fixture = try FixtureServer()
    } catch {
        FileHandle.standardError.write(
            Data("Error: cannot start the fixture server (python3 needed): \(error).\n".utf8))
        exit(1)
    }
    baseURL = fixture!.baseURL
}

do {
    let state = FileManager.default.temporaryDirectory.appendingPathComponent("partyradio-bench-\(UUID().uuidString)")
        .path
    defer { try? FileManager.default.removeItem(atPath: state) }
    let cache = try CatalogCache(stateDirectory: state)
    let endpoints = CatalogEndpoints(iTunesBaseURL: baseURL)
    let catalog = Catalog(configuration: CatalogConfiguration(endpoints: endpoints), cache: cache)

    let big = try await HTTPClient().get(HTTPRequest(url: baseURL + "/search?term=big&limit=200"))
    let decodeIterations = max(options.iterations * 4, 20)
    var decoded = 0
    let decodeSamples = try await measure(decodeIterations) {
        decoded = try ITunesDecoder.decode(big.body).tracks.count
    }
    let parseSamples = try await measure(decodeIterations) { _ = try JSONParser.parse(big.body) }
    print("partyradio catalog benchmark (fixture server \(baseURL))")
    print("")
    print("decode 200-result response (\(big.body.count / 1024) KiB, \(decoded) tracks)")
    print("  " + summary(decodeSamples))
    print("  of which JSON parsing:  " + summary(parseSamples))

    for (term, label) in [("big", "200 results"), ("daft punk", "4 results")] {
        let uncached = try await measure(options.iterations) {
            _ = try await catalog.searchResult(term, limit: 200, refresh: true)
        }
        var hits = 0
        let cached = try await measure(options.iterations) {
            if try await catalog.searchResult(term, limit: 200).fromCache { hits += 1 }
        }
        print("")
        print("search '\(term)' (\(label))")
        print("  uncached (network + decode + store): " + summary(uncached))
        print("  cached   (SQLite + decode):          " + summary(cached) + "   hits \(hits)/\(options.iterations)")
        let key = "GET " + endpoints.search(term: term, country: "us", limit: 200, allowExplicit: true)
        let read = await measure(options.iterations) { _ = cache.lookup(key, now: Int(now())) }
        print("  of which the SQLite read + checksum: " + summary(read))
    }
} catch {
    FileHandle.standardError.write(Data("Error: \(error)\n".utf8))
    fixture?.stop()
    exit(1)
}
fixture?.stop()

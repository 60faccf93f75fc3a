// swift-tools-version:6.0
// partyradio — a peer-to-peer party radio for the local network.
//
// The folder names under Sources/ tell the layers, innermost first:
//   Core/      pure Swift: domain model, wire codec, tallies, clock arithmetic (no I/O, no C)
//   CShims/    system-library targets (pkg-config) and small C wrappers for what Swift cannot call
//   Adapters/  one I/O edge apiece: network (sockets, multicast, Avahi), security (libsodium),
//              catalog (libcurl), media (the player, libmpv, loaded only to play; its cache; TagLib),
//              HTTP (the DJ's server, libmicrohttpd, and the web page's QR codes, libqrencode),
//              storage (SQLite), the desktop's media controls (MPRIS)
//   Node/      the DJ, listener, observer and voter that wire core and adapters together
//   CLI/       argument parsing (a pure function) and the commands' terminal/JSON output
//   App/       the `partyradio` executable
//   Fuzz/, Bench/  the fuzzing harness and the benchmarks; Support/ what they and the tests share
//              (the catalog fixture server), in no product
import PackageDescription

#if canImport(Glibc)
    import Glibc

    /// glibc 2.36 and later read packed relative relocations (DT_RELR); older ones would refuse the binary.
    let libcReadsRELR: Bool = {
        var text = [CChar](repeating: 0, count: 64)  // "glibc 2.36"
        guard confstr(Int32(_CS_GNU_LIBC_VERSION), &text, text.count) > 0 else { return false }
        let words = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let version = words.split(separator: " ").last?.split(separator: ".").compactMap { Int($0) } ?? []
        return version.count >= 2 && (version[0], version[1]) >= (2, 36)
    }()

    /// Swift's toolchains for Linux bring lld (`ld.lld`); without it the release binary is linked as
    /// before, with gold.
    let toolchainHasLLD = (Context.environment["PATH"] ?? "").split(separator: ":").contains {
        access("\($0)/ld.lld", X_OK) == 0
    }
#else
    let libcReadsRELR = false
    let toolchainHasLLD = false
#endif

/// A system-library target. `pkgConfig` is nil where the library's pkg-config file only adds
/// flags SwiftPM prohibits (`-D_REENTRANT`) and the headers sit in /usr/include anyway.
func systemLibrary(_ name: String, pkgConfig: String?, apt: String) -> Target {
    .systemLibrary(
        name: name, path: "Sources/CShims/\(name)", pkgConfig: pkgConfig,
        providers: [.apt([apt])])
}

/// How the release binary is linked (docs/BINARY.md, "Code laid out by use"): with lld, the functions the
/// commands run placed first (`partyradio.order`, made by scripts/order-file.py), so that the pages
/// the kernel maps around each one hold code that runs rather than code that never does; and, where
/// glibc reads them, relative relocations packed (DT_RELR: 20 KB instead of 1.8 MB read at every start).
let releaseLinking: [LinkerSetting] =
    !toolchainHasLLD
    ? []
    : [
        .unsafeFlags(
            [
                "-use-ld=lld",
                "-Xlinker",
                "--symbol-ordering-file=\(Context.packageDirectory)/Sources/App/partyradio/partyradio.order",
                "-Xlinker", "--no-warn-symbol-ordering",
            ] + (libcReadsRELR ? ["-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"] : []),
            .when(configuration: .release))
    ]

let package = Package(
    name: "partyradio",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "partyradio", targets: ["partyradio"])
    ],
    targets: [
        // MARK: Core
        // libm: the stdlib's rounding and square root call into it on Linux.
        .target(name: "PartyRadioCore", path: "Sources/Core/PartyRadioCore", linkerSettings: [.linkedLibrary("m")]),

        // MARK: C shims
        systemLibrary("CAvahi", pkgConfig: nil, apt: "libavahi-client-dev"),
        systemLibrary("CSodium", pkgConfig: "libsodium", apt: "libsodium-dev"),
        // Headers only: libcurl is loaded with dlopen at the first transfer (CCurlShim).
        systemLibrary("CCurl", pkgConfig: nil, apt: "libcurl4-openssl-dev"),
        systemLibrary("CSQLite", pkgConfig: "sqlite3", apt: "libsqlite3-dev"),
        // Headers only: libmicrohttpd is loaded with dlopen by the DJ's server (CMicroHTTPDShim).
        systemLibrary("CMicroHTTPD", pkgConfig: nil, apt: "libmicrohttpd-dev"),
        // Headers only: TagLib is loaded with dlopen while the library is scanned (CTagLibShim).
        systemLibrary("CTagLib", pkgConfig: nil, apt: "libtagc0-dev"),
        // Headers only: libcrypto is loaded with dlopen to sign Apple Music tokens (COpenSSLShim).
        systemLibrary("COpenSSL", pkgConfig: nil, apt: "libssl-dev"),
        systemLibrary("CQRencode", pkgConfig: "libqrencode", apt: "libqrencode-dev"),
        systemLibrary("CSystemd", pkgConfig: "libsystemd", apt: "libsystemd-dev"),
        // Unicast DNS-SD (`--domain`): RFC 2136 updates with TSIG, and the queries that browse a zone.
        // Headers only: ldns is loaded with dlopen by `--domain` (CLDNSShim).
        systemLibrary("CLDNS", pkgConfig: nil, apt: "libldns-dev"),
        // Live audio (docs/LIVE.md): the Opus codec, and ISA-L's Reed-Solomon erasure code for the FEC.
        systemLibrary("COpus", pkgConfig: "opus", apt: "libopus-dev"),
        systemLibrary("CISAL", pkgConfig: "libisal", apt: "libisal-dev"),
        // The live output's drift correction: a resampler whose ratio changes smoothly while it runs.
        systemLibrary("CSpeexDSP", pkgConfig: "speexdsp", apt: "libspeexdsp-dev"),
        // Headers only: libpulse's simple API is loaded with dlopen by the live output (CPulseShim).
        systemLibrary("CPulse", pkgConfig: nil, apt: "libpulse-dev"),
        // Libraries loaded with dlopen by what uses them (each shim's table of functions).
        .target(name: "CDynamicLibrary", path: "Sources/CShims/CDynamicLibrary"),
        .target(name: "CCurlShim", dependencies: ["CCurl", "CDynamicLibrary"], path: "Sources/CShims/CCurlShim"),
        .target(name: "CTagLibShim", dependencies: ["CTagLib", "CDynamicLibrary"], path: "Sources/CShims/CTagLibShim"),
        .target(name: "CLDNSShim", dependencies: ["CLDNS", "CDynamicLibrary"], path: "Sources/CShims/CLDNSShim"),
        .target(
            name: "COpenSSLShim", dependencies: ["COpenSSL", "CDynamicLibrary"], path: "Sources/CShims/COpenSSLShim"),
        .target(
            name: "CMicroHTTPDShim", dependencies: ["CMicroHTTPD", "CDynamicLibrary"],
            path: "Sources/CShims/CMicroHTTPDShim"),
        .target(name: "CPulseShim", dependencies: ["CPulse", "CDynamicLibrary"], path: "Sources/CShims/CPulseShim"),
        // opus_encoder_ctl is variadic: one typed wrapper per request.
        .target(name: "COpusShim", dependencies: ["COpus"], path: "Sources/CShims/COpusShim"),
        // The MPRIS object's sd-bus vtable (C-only macros), and sd-bus's variadic calls for it and for
        // the live DJ's follower of another player.
        .target(name: "CMPRISShim", dependencies: ["CSystemd"], path: "Sources/CShims/CMPRISShim"),
        // libmpv is not linked: only the commands that play load it, with dlopen at the first player
        // (its ~190 libraries cost every command ~80 ms of start-up). mpv's header gives the types.
        // The libpulse functions CMpvLoader defines must be in the dynamic symbol table of
        // whatever links it, for libmpv's calls to find them (include/CMpvLoader.h, "PulseAudio's
        // request size"); release builds export every symbol anyway (--static-swift-stdlib).
        .target(
            name: "CMpvLoader", path: "Sources/CShims/CMpvLoader",
            linkerSettings: [
                .unsafeFlags([
                    "-Xlinker", "--export-dynamic-symbol=pa_stream_connect_playback",
                    "-Xlinker", "--export-dynamic-symbol=pa_stream_get_buffer_attr",
                    "-Xlinker", "--export-dynamic-symbol=pa_stream_update_timing_info",
                    "-Xlinker", "--export-dynamic-symbol=pa_stream_get_timing_info",
                    "-Xlinker", "--export-dynamic-symbol=pa_stream_cork",
                ])
            ]),

        // MARK: Adapters
        .target(
            name: "PartyRadioSecurity", dependencies: ["PartyRadioCore", "CSodium"],
            path: "Sources/Adapters/PartyRadioSecurity"),
        .target(
            name: "PartyRadioNet", dependencies: ["PartyRadioCore", "CAvahi", "CLDNS", "CLDNSShim"],
            path: "Sources/Adapters/PartyRadioNet"),
        // The one way partyradio fetches over HTTP (the catalog's client, the media cache): libcurl's
        // load and global init, its options and C callbacks, in one place.
        .target(
            name: "PartyRadioCurl", dependencies: ["PartyRadioCore", "CCurl", "CCurlShim"],
            path: "Sources/Adapters/PartyRadioCurl"),
        .target(
            name: "PartyRadioCatalog",
            dependencies: [
                "PartyRadioCore", "PartyRadioSQLite", "PartyRadioCurl", "CSQLite", "COpenSSL", "COpenSSLShim",
            ],
            path: "Sources/Adapters/PartyRadioCatalog"),
        .target(
            name: "PartyRadioMedia",
            dependencies: ["PartyRadioCore", "CMpvLoader", "CTagLibShim", "PartyRadioCurl"],
            path: "Sources/Adapters/PartyRadioMedia"),
        // The DJ's HTTP server (music for listeners, the web page) and the page's QR codes.
        .target(
            name: "PartyRadioHTTP", dependencies: ["PartyRadioCore", "CMicroHTTPDShim", "CQRencode"],
            path: "Sources/Adapters/PartyRadioHTTP"),
        // A small SQLite connection (prepared statements kept, transactions), shared by the DJ's store
        // and the catalog's cache.
        .target(name: "PartyRadioSQLite", dependencies: ["CSQLite"], path: "Sources/Adapters/PartyRadioSQLite"),
        .target(
            name: "PartyRadioStorage", dependencies: ["PartyRadioCore", "PartyRadioSQLite", "CSQLite"],
            path: "Sources/Adapters/PartyRadioStorage"),
        // The desktop's media controls: an MPRIS 2 player on the D-Bus session bus (sd-bus), and a live
        // DJ's follower of another player there (its state parsed by the core's LivePlayerState).
        .target(
            name: "PartyRadioMPRIS", dependencies: ["PartyRadioCore", "CMPRISShim", "CSystemd"],
            path: "Sources/Adapters/PartyRadioMPRIS"),

        // Live audio's codec (libopus), FEC (ISA-L, behind the core's `ErasureCode`), output
        // (libpulse) and drift correction (speexdsp) (docs/LIVE.md).
        .target(
            name: "PartyRadioLive",
            dependencies: ["PartyRadioCore", "COpus", "COpusShim", "CISAL", "CPulseShim", "CSpeexDSP"],
            path: "Sources/Adapters/PartyRadioLive"),

        // MARK: Node
        .target(
            name: "PartyRadioNode",
            dependencies: [
                "PartyRadioCore", "PartyRadioSecurity", "PartyRadioNet", "PartyRadioMedia", "PartyRadioHTTP",
                "PartyRadioStorage", "PartyRadioMPRIS", "PartyRadioLive", "PartyRadioCurl",
            ],
            path: "Sources/Node/PartyRadioNode",
            // The web page, compiled into the binary as bytes (`PackageResources`): no files to install.
            resources: [
                .embedInCode("Web/Page/index.html"), .embedInCode("Web/Page/page.css"),
                .embedInCode("Web/Page/page.js"),
            ]),

        // MARK: CLI and app
        .target(
            name: "PartyRadioCLI",
            dependencies: [
                "PartyRadioCore", "PartyRadioNode", "PartyRadioCatalog", "PartyRadioStorage", "PartyRadioMedia",
                "PartyRadioCurl",
            ],
            path: "Sources/CLI/PartyRadioCLI"),
        .executableTarget(
            name: "partyradio", dependencies: ["PartyRadioCLI"], path: "Sources/App/partyradio",
            exclude: ["partyradio.order"], linkerSettings: releaseLinking),

        // MARK: Fuzzing (scripts/fuzz builds it with -sanitize=fuzzer,address -DFUZZING; without
        // them it replays inputs through one harness)
        .executableTarget(
            name: "partyradio-fuzz",
            dependencies: ["PartyRadioCore", "PartyRadioCatalog", "PartyRadioSecurity", "PartyRadioLive"],
            path: "Sources/Fuzz/partyradio-fuzz", swiftSettings: [.unsafeFlags(["-parse-as-library"])]),

        // MARK: Support for tests and benchmarks
        // The catalog fixture server (a fake Apple on 127.0.0.1), one copy for the tests and the catalog
        // benchmark: under Sources, since a benchmark in Sources/Bench should not reach into Tests/.
        .target(name: "CatalogTestSupport", path: "Sources/Support/CatalogTestSupport"),

        // MARK: Benchmarks
        .executableTarget(
            name: "partyradio-bench-catalog", dependencies: ["PartyRadioCatalog", "CatalogTestSupport"],
            path: "Sources/Bench/partyradio-bench-catalog"),
        .executableTarget(
            name: "partyradio-bench-storage", dependencies: ["PartyRadioStorage", "PartyRadioCore"],
            path: "Sources/Bench/partyradio-bench-storage"),
        .executableTarget(
            name: "partyradio-bench-forgery", dependencies: ["PartyRadioSecurity", "PartyRadioCore"],
            path: "Sources/Bench/partyradio-bench-forgery"),
        .executableTarget(
            name: "partyradio-bench-votes",
            dependencies: ["PartyRadioSecurity", "PartyRadioCore", "PartyRadioStorage"],
            path: "Sources/Bench/partyradio-bench-votes"),

        // MARK: Tests
        // A stand-in signer for the node tests and the simulator (a plain target: two test targets use it).
        .target(name: "NodeTestSupport", dependencies: ["PartyRadioCore"], path: "Tests/NodeTestSupport"),
        .testTarget(name: "PartyRadioCoreTests", dependencies: ["PartyRadioCore", "NodeTestSupport"]),
        // The simulated LAN: the node state machines on an in-memory network, hundreds of seeds.
        .testTarget(name: "PartyRadioSimulationTests", dependencies: ["PartyRadioCore", "NodeTestSupport"]),
        .testTarget(
            name: "PartyRadioAdapterTests",
            dependencies: [
                "PartyRadioCore", "PartyRadioSecurity", "PartyRadioNet", "CSodium", "PartyRadioCurl",
                "CatalogTestSupport", "PartyRadioMPRIS",
            ]),
        .testTarget(
            name: "PartyRadioNodeTests",
            dependencies: [
                "PartyRadioNode", "PartyRadioCore", "PartyRadioSecurity", "PartyRadioNet", "PartyRadioMPRIS",
                "PartyRadioHTTP", "PartyRadioLive",
            ]),
        .testTarget(
            name: "PartyRadioCLITests",
            dependencies: [
                "PartyRadioCLI", "PartyRadioCore", "PartyRadioStorage", "PartyRadioCatalog", "PartyRadioNode",
                "CatalogTestSupport",
            ]),
        // The live test checks signatures with libsodium and decodes what it caught with libopus and ISA-L.
        .testTarget(
            name: "IntegrationTests", dependencies: ["PartyRadioCore", "PartyRadioSecurity", "PartyRadioLive"]),
        .testTarget(
            name: "PartyRadioCatalogTests",
            dependencies: ["PartyRadioCatalog", "PartyRadioCurl", "COpenSSL", "CSQLite", "CatalogTestSupport"],
            // The tests check signatures with libcrypto itself (the catalog loads it with dlopen).
            linkerSettings: [.linkedLibrary("crypto")]),
        .testTarget(
            name: "PartyRadioMediaTests",
            // The HTTP server: a player test plays a file it serves.
            dependencies: [
                "PartyRadioMedia", "PartyRadioCore", "CTagLibShim", "CMpvLoader", "CatalogTestSupport",
                "PartyRadioHTTP",
            ]),
        // The media player's stream volume is heard on the same real null sink as the live output.
        .testTarget(
            name: "PartyRadioLiveTests",
            dependencies: ["PartyRadioLive", "PartyRadioCore", "PartyRadioMedia", "CMpvLoader"]),
        .testTarget(name: "PartyRadioHTTPTests", dependencies: ["PartyRadioHTTP", "PartyRadioCore"]),
        .testTarget(
            name: "PartyRadioStorageTests", dependencies: ["PartyRadioStorage", "PartyRadioSQLite", "PartyRadioCore"]),
    ]
)

// Each function in a section of its own in release builds, so the linker can place the ones the
// commands run together (see `releaseLinking`).
for target in package.targets where target.type == .regular || target.type == .executable {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release))
        ]
}

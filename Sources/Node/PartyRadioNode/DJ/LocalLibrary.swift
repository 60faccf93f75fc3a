import Foundation
import PartyRadioCore
import PartyRadioHTTP
import PartyRadioMedia
import Synchronization

/// The DJ's local music: scanned from `--library` folders (or a generated demo library) and
/// served to listeners over HTTP. Only the queued files are registered with the server.
/// ``rescan()`` runs off the DJ's thread (`DJNode` runs them one at a time); the tracks are kept
/// under a lock, and the server locks its own registry.
final class LocalLibrary: Sendable {
    let server: MediaServer
    private let served: Mutex<[Track]>
    /// What the first scan skipped.
    let warnings: [String]
    /// The folders scanned (the demo library's when the user named none).
    private let roots: [String]

    /// The tracks served so far.
    var tracks: [Track] { served.withLock { $0 } }

    /// - Parameters:
    ///   - folders: the user's `--library` folders; empty means the demo library in `stateDirectory`.
    ///   - server: the DJ's HTTP server (made before the library: its port goes in the advert).
    init(folders: [String], stateDirectory: URL, server: MediaServer) throws(NodeError) {
        var roots = folders
        for folder in folders {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue
            else {
                throw NodeError(.usage, "The library folder '\(folder)' does not exist; pass a folder of music files.")
            }
        }
        if folders.isEmpty {
            let demo = stateDirectory.appendingPathComponent("demo-library").path
            roots = [demo]
            if Self.audioFiles(in: demo) < DemoTrackSpec.standard().count {
                do { _ = try DemoLibrary.generate(into: demo) } catch {
                    throw NodeError(
                        .storage, "Cannot write the demo library to \(demo) (\(error)); pass a writable --state-dir.")
                }
            }
        }
        self.roots = roots
        let scan = LibraryScanner().scan(roots)
        guard !scan.tracks.isEmpty else {
            throw NodeError(
                .storage,
                "No playable music in \(roots.joined(separator: ", ")) (mp3, ogg, opus, flac, m4a or wav); "
                    + "pass another --library.")
        }
        self.server = server
        let (tracks, warnings) = Self.serve(
            scan.tracks, on: server, warnings: scan.warnings.map { "Skipped \($0.description)" })
        served = Mutex(tracks)
        self.warnings = warnings
    }

    /// Registers `files` with `server`: the tracks as listeners reach them, and a warning for each
    /// file that cannot be served.
    private static func serve(_ files: [LibraryTrack], on server: MediaServer, warnings: [String]) -> (
        [Track], [String]
    ) {
        var tracks: [Track] = []
        var warnings = warnings
        for file in files {
            // The track ID's hash is the token, so a restarted DJ serves the same URLs.
            let token = String(file.id.split(separator: ":").last ?? "")
            guard (try? server.register(path: file.path, token: token)) != nil else {
                warnings.append("Skipped \(file.path): it cannot be served")
                continue
            }
            tracks.append(file.track(source: server.url(token: token)))
        }
        return (tracks, warnings)
    }

    /// Scans the folders again (on SIGHUP): the music that is new since the last scan, served
    /// and returned to be queued; how many known files are gone (they stay queued until the DJ
    /// starts again, which drops them).
    func rescan() -> (new: [Track], warnings: [String], gone: Int) {
        let scan = LibraryScanner().scan(roots)
        let known = Set(tracks.map(\.id))
        let (new, warnings) = Self.serve(
            scan.tracks.filter { !known.contains($0.id) }, on: server,
            warnings: scan.warnings.map { "Skipped \($0.description)" })
        let present = Set(scan.tracks.map(\.id))
        served.withLock { $0 += new }
        return (new, warnings, known.subtracting(present).count)
    }

    private static func audioFiles(in directory: String) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".wav") }.count
    }
}

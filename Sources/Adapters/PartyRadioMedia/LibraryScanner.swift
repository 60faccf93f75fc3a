import CTagLibShim
import Foundation
import Glibc
import PartyRadioCore
import Synchronization

/// Finds the music files under the DJ's library directories and reads their tags with TagLib.
/// Files TagLib cannot read are skipped and reported in `LibraryScan.warnings`; nothing is printed.
public struct LibraryScanner: Sendable {
    /// One skipped file or directory and why.
    public struct Warning: Error, Hashable, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "\(path): \(reason)" }
    }

    /// What a scan found: tracks sorted by path, and what it skipped.
    public struct Result: Sendable {
        public var tracks: [LibraryTrack]
        public var warnings: [Warning]
    }

    public init() {}

    /// Scans `directories` recursively (hidden files and directories skipped) for mp3, ogg/opus,
    /// flac, m4a and wav files. A path that is a file is read directly.
    public func scan(_ directories: [String]) -> Result {
        // TagLib stays loaded for the whole scan, and is unloaded after it (TagLibReader).
        let loaded = prtag_acquire() == 0
        defer { if loaded { prtag_release() } }
        var tracks: [LibraryTrack] = []
        var warnings: [Warning] = []
        var seen = Set<String>()
        for root in directories {
            for path in audioFiles(under: root, warnings: &warnings) where seen.insert(path).inserted {
                switch readTrack(atPath: path) {
                case .success(let track): tracks.append(track)
                case .failure(let warning): warnings.append(warning)
                }
            }
        }
        tracks.sort { $0.path < $1.path }
        return Result(tracks: tracks, warnings: warnings)
    }

    /// Reads one file's tags and duration; a missing title falls back to the file name.
    public func readTrack(atPath path: String) -> Swift.Result<LibraryTrack, Warning> {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return .failure(Warning(path: path, reason: "cannot be read (\(String(cString: strerror(errno))))"))
        }
        guard access(path, R_OK) == 0 else { return .failure(Warning(path: path, reason: "permission denied")) }
        guard let kind = MediaKind(fileName: path) else {
            return .failure(Warning(path: path, reason: "not a supported audio format"))
        }
        let tags: TagLibReader.Tags
        do {
            tags = try TagLibReader.read(path: path, kind: kind)
        } catch {
            return .failure(Warning(path: path, reason: error.reason))
        }
        let fileName = (path as NSString).lastPathComponent
        let stem = (fileName as NSString).deletingPathExtension
        let modifiedNs = Int64(info.st_mtim.tv_sec) * Nanos.perSecond + Int64(info.st_mtim.tv_nsec)
        return .success(
            LibraryTrack(
                id: LibraryTrack.stableID(path: path, size: Int64(info.st_size), modifiedNs: modifiedNs),
                path: path,
                title: tags.title.isEmpty ? stem : tags.title,
                artist: tags.artist,
                album: tags.album,
                durationMs: tags.durationMs))
    }

    /// Absolute paths of files with an audio extension under `root`, sorted.
    private func audioFiles(under root: String, warnings: inout [Warning]) -> [String] {
        let rootURL = URL(fileURLWithPath: root).standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: rootURL.path, isDirectory: &isDirectory) else {
            warnings.append(Warning(path: root, reason: "no such file or directory"))
            return []
        }
        guard isDirectory.boolValue else { return MediaKind(fileName: rootURL.path) == nil ? [] : [rootURL.path] }
        let collected = WarningSink()
        let enumerator = FileManager.default.enumerator(
            at: rootURL, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles],
            errorHandler: { url, error in
                collected.warnings.withLock {
                    $0.append(Warning(path: url.path, reason: "cannot be listed (\(error.localizedDescription))"))
                }
                return true
            })
        var paths: [String] = []
        while let url = enumerator?.nextObject() as? URL {
            guard MediaKind(fileName: url.lastPathComponent) != nil,
                (try? url.resourceValues(forKeys: [URLResourceKey.isRegularFileKey]))?.isRegularFile == true
            else { continue }
            paths.append(url.path)
        }
        warnings += collected.warnings.withLock { $0 }
        return paths.sorted()
    }
}

/// Collects directory-listing errors from FileManager's error handler.
private final class WarningSink: Sendable {
    let warnings = Mutex<[LibraryScanner.Warning]>([])
}

/// TagLib's C API behind a throwing Swift call. TagLib is loaded with dlopen for the read (or the
/// scan around it) and unloaded after it (CTagLibShim), so a DJ that is not scanning does not map it.
enum TagLibReader {
    struct Tags {
        var title: String
        var artist: String
        var album: String
        var durationMs: UInt32
    }

    struct Failure: Error {
        var reason: String
    }

    static func read(path: String, kind: MediaKind) throws(Failure) -> Tags {
        guard prtag_acquire() == 0 else { throw Failure(reason: String(cString: prtag_load_error())) }
        defer { prtag_release() }
        let found = prtag_read(path)
        // Taken (and freed) before anything is thrown.
        let title = take(found.title)
        let artist = take(found.artist)
        let album = take(found.album)
        switch found.status {
        case 0: break
        case 1: throw Failure(reason: "TagLib cannot open it as \(kind.rawValue) (corrupt or not audio)")
        case 2: throw Failure(reason: "TagLib cannot read it as \(kind.rawValue) (corrupt or not audio)")
        default: throw Failure(reason: "no audio stream found")
        }
        guard found.sample_rate > 0 || found.seconds > 0 else { throw Failure(reason: "no audio stream found") }
        return Tags(title: title, artist: artist, album: album, durationMs: UInt32(max(0, found.seconds)) * 1000)
    }

    /// Copies and frees a TagLib string, trimming the whitespace some taggers leave.
    private static func take(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        defer { prtag_free(pointer) }
        return String(cString: pointer).trimmingWhitespace()
    }
}

import Foundation
import PartyRadioCore
import Synchronization

/// The shared libraries that loading libmpv brought into the process, and the pages of theirs that
/// only the load itself needed.
///
/// Debian's libmpv maps 228 libraries (ffmpeg's codecs, filters and devices, PipeWire, X11,
/// Wayland, librsvg…). Loading them touches their headers, symbol tables and relocations, and runs
/// their constructors; the kernel maps the 16 pages around each page touched (fault-around), so a
/// bare C program that only loads libmpv and plays one file holds 45 MB of mapped files, of which
/// it touches 11 MB again while it plays (measured: `MADV_PAGEOUT` after 5 s of playing, then 25 s
/// more; docs/BENCHMARKS.md, "Memory"). ``releaseLoadTimePages()`` hands those pages back to the
/// kernel once the player plays: what playing needs comes back at its next touch (from the page
/// cache, or the disk if it was dropped), the rest stays out.
public enum PlayerLibraries {
    /// The private file mappings the first load of libmpv brought (empty before it, or when
    /// `/proc/self/maps` could not be read).
    private static let brought = Mutex<Set<String>?>(nil)

    /// What one release did, for the debug log and the memory benchmark.
    public struct Release: Sendable, CustomStringConvertible {
        /// Files and bytes of address space advised.
        public var files: Int
        public var bytes: UInt
        /// Mapped files resident before and after (`RssFile`, kB), when `/proc/self/status` says.
        public var residentFileKBBefore: Int?
        public var residentFileKBAfter: Int?
        /// The kernel refused the advice (older than Linux 5.4: no `MADV_PAGEOUT`).
        public var unsupported: Bool

        public var description: String {
            let before = residentFileKBBefore.map { "\($0 / 1024) MB" } ?? "?"
            let after = residentFileKBAfter.map { "\($0 / 1024) MB" } ?? "?"
            return unsupported
                ? "the kernel has no MADV_PAGEOUT: libmpv's load-time pages stay"
                : "libmpv's load-time pages released: \(files) files, mapped files resident \(before) → \(after)"
        }
    }

    /// Runs `load` (libmpv's `dlopen`) and, the first time it succeeds, remembers which files it mapped.
    static func recordingLoad(_ load: () -> Int32) -> Int32 {
        brought.withLock { brought in
            guard brought == nil else { return load() }
            let before = readMaps()
            let code = load()
            if code == 0, let before, let after = readMaps() {
                brought = Set(MappedRegion.brought(before: before, after: after).map(\.path))
            }
            return code
        }
    }

    /// The files the first load of libmpv brought (for tests).
    static var broughtPaths: Set<String> { brought.withLock { $0 ?? [] } }

    /// Whether there are pages to release (libmpv was loaded in this process and its map was read).
    public static var canRelease: Bool { brought.withLock { !($0?.isEmpty ?? true) } }

    /// Advises the kernel to reclaim every resident page of the libraries libmpv brought
    /// (`MADV_PAGEOUT`, madvise(2)): clean file pages, so nothing is lost; a page mapped by another
    /// process too stays. Takes about 25 ms: call it off any thread that keeps time.
    @discardableResult
    public static func releaseLoadTimePages() -> Release? {
        guard let paths = brought.withLock({ $0 }), !paths.isEmpty, let regions = readMaps() else { return nil }
        var release = Release(files: 0, bytes: 0, residentFileKBBefore: residentFileKB(), unsupported: false)
        var files = Set<String>()
        for region in regions where region.isFile && region.isPrivate && paths.contains(region.path) {
            guard let address = UnsafeMutableRawPointer(bitPattern: region.start) else { continue }
            if madvise(address, Int(region.length), madvisePageOut) != 0 {
                if errno == EINVAL {
                    release.unsupported = true
                    break
                }
                continue  // unmapped since the map was read, say: the others still count
            }
            files.insert(region.path)
            release.bytes += region.length
        }
        release.files = files.count
        release.residentFileKBAfter = residentFileKB()
        return release
    }

    /// madvise(2)'s `MADV_PAGEOUT` (Linux 5.4; glibc's `<sys/mman.h>` names it, Swift's Glibc module
    /// does not export it).
    private static let madvisePageOut: Int32 = 21

    private static func readMaps() -> [MappedRegion]? {
        readProc("/proc/self/maps").map { MappedRegion.parse($0) }
    }

    /// A file of /proc, whole. (Foundation's `FileManager.contents(atPath:)` and
    /// `String(contentsOfFile:)` stop after the first 4 KB there: /proc reports a size of 0.)
    private static func readProc(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.readToEnd() else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// `RssFile` of `/proc/self/status`, in kB.
    static func residentFileKB() -> Int? {
        guard let status = readProc("/proc/self/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("RssFile:") {
            return Int(line.dropFirst("RssFile:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }
}

import Foundation
import PartyRadioCore

/// The file pages a playing node touched while it started, handed back to the kernel once it plays.
///
/// Debian's libmpv maps 228 libraries (ffmpeg's codecs, filters and devices, PipeWire, X11,
/// Wayland, librsvg…). Loading them touches their headers, symbol tables and relocations, and runs
/// their constructors; the kernel maps the 16 pages around each page touched (fault-around). So a
/// bare C program that only loads libmpv and plays one file holds 45 MB of mapped files, of which
/// it touches 11 MB again while it plays (docs/BENCHMARKS.md, "Memory"); partyradio's own binary,
/// whose start-up runs code that playing never runs again, is the same in small.
/// ``release()`` advises the kernel to reclaim every resident page of the process's private file
/// mappings (`MADV_PAGEOUT`, madvise(2)): clean pages of files, so nothing is lost; what playing
/// needs comes back at its next touch (from the page cache, or the disk if it was dropped), the
/// rest stays out. A page that another process maps too (libc, a second player on the machine)
/// stays where it is.
public enum StartupPages {
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
                ? "the kernel has no MADV_PAGEOUT: the start-up pages stay"
                : "start-up pages released: \(files) files, mapped files resident \(before) → \(after)"
        }
    }

    /// Releases the resident pages of every private file mapping (the binary, libmpv's tree, the
    /// other libraries). Takes about 25 ms: call it off any thread that keeps time.
    /// - Returns: nil when `/proc/self/maps` cannot be read.
    @discardableResult
    public static func release() -> Release? {
        guard let regions = readProc("/proc/self/maps").map({ MappedRegion.parse($0) }) else { return nil }
        var release = Release(files: 0, bytes: 0, residentFileKBBefore: residentFileKB(), unsupported: false)
        var files = Set<String>()
        for region in regions where region.isFile && region.isPrivate {
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

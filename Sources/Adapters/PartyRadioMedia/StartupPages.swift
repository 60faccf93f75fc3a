import Foundation
import PartyRadioCore

/// The file pages a playing node touched while it started, handed back to the kernel once it plays.
///
/// Debian's libmpv maps 228 libraries (ffmpeg's codecs, filters and devices, PipeWire, X11,
/// Wayland, librsvg…). Loading them touches their headers, symbol tables and relocations, and runs
/// their constructors; the kernel maps the 16 pages around each page touched (fault-around). So a
/// bare C program that only loads libmpv and plays one file holds 45 MB of mapped files, of which
/// it touches 11 MB again while it plays (docs/MEDIA.md, "What starting leaves resident");
/// partyradio's own binary, whose start-up runs code that playing never runs again, is the same in
/// small.
/// ``release()`` drops the process's mappings of those pages (`MADV_DONTNEED`, madvise(2)) in
/// every private file mapping it cannot write (code, read-only data): the pages stay in the page
/// cache, where the kernel takes them back first when memory runs short (unmapped clean pages
/// are reclaimed before mapped ones), and what playing needs is mapped again at its next touch (a minor fault, no I/O). A
/// page the process holds a private copy of (relocated before it was made read-only) is never
/// dropped: `/proc/self/pagemap` says which (``MappedRegion/droppableRuns(_:)``). Nothing changes
/// for another process: its mappings and the page cache are untouched. (`MADV_PAGEOUT`, tried
/// first, evicts the pages from the page cache itself; with two players on one machine sharing
/// them, it raised both players' CPU about fourfold and broke their sound; docs/MEDIA.md.)
public enum StartupPages {
    /// What one release did, for the debug log and the memory benchmark.
    public struct Release: Sendable, CustomStringConvertible {
        /// Files whose mappings were dropped, and the bytes of address space dropped.
        public var files: Int
        public var bytes: UInt
        /// Private copies kept, in pages.
        public var privatePagesKept: Int
        /// Mapped files resident before and after (`RssFile`, kB), when `/proc/self/status` says.
        public var residentFileKBBefore: Int?
        public var residentFileKBAfter: Int?
        /// How long it took, reading the maps and the page map included.
        public var elapsedMs: Double = 0

        public var description: String {
            let before = residentFileKBBefore.map { "\($0 / 1024) MB" } ?? "?"
            let after = residentFileKBAfter.map { "\($0 / 1024) MB" } ?? "?"
            return "start-up pages released: \(files) files, mapped files resident \(before) → \(after)"
                + " in \(String(format: "%.1f", elapsedMs)) ms"
        }
    }

    /// Drops the mappings of every file page the process maps privately and cannot write (the
    /// binary's code, libmpv's tree, the other libraries). Takes a few milliseconds: call it off any
    /// thread that keeps time.
    /// - Returns: nil when `/proc/self/maps` or `/proc/self/pagemap` cannot be read.
    @discardableResult
    public static func release() -> Release? {
        let started = DispatchTime.now().uptimeNanoseconds
        guard let regions = readProc("/proc/self/maps").map({ MappedRegion.parse($0) }) else { return nil }
        let pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)
        guard pagemap >= 0 else { return nil }
        defer { close(pagemap) }
        let pageSize = UInt(sysconf(Int32(_SC_PAGESIZE)))
        var release = Release(files: 0, bytes: 0, privatePagesKept: 0, residentFileKBBefore: residentFileKB())
        var files = Set<String>()
        var entries: [UInt64] = []
        for region in regions where region.isFile && region.isPrivate && !region.isWritable {
            let pages = Int(region.length / pageSize)
            entries = [UInt64](repeating: 0, count: pages)
            let wanted = pages * MemoryLayout<UInt64>.size
            let read = entries.withUnsafeMutableBytes { buffer in
                pread(pagemap, buffer.baseAddress, wanted, off_t(region.start / pageSize) * 8)
            }
            guard read == wanted else { continue }  // unmapped since the map was read, say
            let runs = MappedRegion.droppableRuns(entries)
            release.privatePagesKept += entries.lazy.filter { PageMapEntry(raw: $0).isPrivateCopy }.count
            for run in runs {
                guard let address = UnsafeMutableRawPointer(bitPattern: region.start + UInt(run.lowerBound) * pageSize)
                else { continue }
                let length = run.count * Int(pageSize)
                guard madvise(address, length, MADV_DONTNEED) == 0 else { continue }
                files.insert(region.path)
                release.bytes += UInt(length)
            }
        }
        release.files = files.count
        release.residentFileKBAfter = residentFileKB()
        release.elapsedMs = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6
        return release
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

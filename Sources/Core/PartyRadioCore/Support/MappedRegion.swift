/// One line of `/proc/PID/maps` (proc(5)): an address range of the process and the file it maps.
/// A playing node reads its own map to hand back the file pages it touched while it started
/// (docs/MEDIA.md, "What starting leaves resident"). Pure, so malformed lines are tested without a process.
public struct MappedRegion: Hashable, Sendable {
    /// First address (inclusive) and end (exclusive).
    public var start: UInt
    public var end: UInt
    /// `r`, `w`, `x` and `p` (private) or `s` (shared), as the kernel prints them.
    public var permissions: String
    /// The file's inode; 0 for anonymous memory, the heap, the stack.
    public var inode: UInt64
    /// The mapped file's path (absolute), or a pseudo-name such as `[heap]`; empty when none.
    public var path: String

    public var length: UInt { end - start }
    /// Whether this region maps a file (not the heap, the stack, `[vdso]` or anonymous memory).
    public var isFile: Bool { inode != 0 && path.hasPrefix("/") }
    /// Whether it maps a file privately (as the dynamic loader maps libraries) rather than shared.
    public var isPrivate: Bool { permissions.hasSuffix("p") }

    public init(start: UInt, end: UInt, permissions: String, inode: UInt64, path: String) {
        self.start = start
        self.end = end
        self.permissions = permissions
        self.inode = inode
        self.path = path
    }

    /// Reads one line: `start-end perms offset dev inode [path]`, fields separated by spaces; nil
    /// when the line has another shape (a range that is empty or backwards, a field that is not
    /// hexadecimal or decimal where it must be). A path may contain spaces and ends the line
    /// (` (deleted)` stays part of it).
    public init?(line: Substring) {
        var rest = line
        func field() -> Substring? {
            while rest.first == " " { rest = rest.dropFirst() }
            guard !rest.isEmpty else { return nil }
            let end = rest.firstIndex(of: " ") ?? rest.endIndex
            defer { rest = rest[end...] }
            return rest[..<end]
        }
        guard let range = field(), let permissions = field(), let offset = field(), let device = field(),
            let inodeText = field()
        else { return nil }
        let bounds = range.split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16),
            start < end, bounds[0].count <= 16, bounds[1].count <= 16
        else { return nil }
        guard permissions.count == 4, permissions.allSatisfy({ "rwxps-".contains($0) }),
            UInt64(offset, radix: 16) != nil, device.contains(":"), let inode = UInt64(inodeText)
        else { return nil }
        while rest.first == " " { rest = rest.dropFirst() }
        self.init(
            start: start, end: end, permissions: String(permissions), inode: inode,
            path: String(rest.hasSuffix("\n") ? rest.dropLast() : rest))
    }

    /// Every well-formed line of a whole maps file; the others are skipped.
    public static func parse(_ text: String) -> [MappedRegion] {
        text.split(separator: "\n").compactMap { MappedRegion(line: $0) }
    }
}

extension MappedRegion {
    /// Whether the process can write to it (`rw-p`: a library's data, copied page by page as it is
    /// written); a region that cannot be written keeps the file's own pages, besides those the
    /// dynamic loader copied while it relocated them before it made them read-only.
    public var isWritable: Bool { permissions.dropFirst().first == "w" }

    /// The runs of a region's pages (page indexes from its start) whose mappings can be dropped
    /// without losing anything, given the region's `/proc/PID/pagemap` entries in order
    /// (``PageMapEntry``): every page that is not a private copy, in runs that hold at least one
    /// page resident (a run with none would change nothing). A private copy splits the runs.
    public static func droppableRuns(_ entries: [UInt64]) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var start = 0
        var resident = false
        for (index, raw) in entries.enumerated() {
            let entry = PageMapEntry(raw: raw)
            if entry.isPrivateCopy {
                if resident { runs.append(start..<index) }
                start = index + 1
                resident = false
            } else if entry.isPresent {
                resident = true
            }
        }
        if resident { runs.append(start..<entries.count) }
        return runs
    }
}

/// One page's entry in `/proc/PID/pagemap`: 64 bits a page, of which the top three say whether it
/// is resident, in swap, and a page of the file (or of shared memory) rather than a private copy.
/// Without `CAP_SYS_ADMIN` the frame number reads as 0; these bits are always there.
public struct PageMapEntry: Hashable, Sendable {
    public var raw: UInt64
    public init(raw: UInt64) { self.raw = raw }

    public var isPresent: Bool { raw & (1 << 63) != 0 }
    public var isSwapped: Bool { raw & (1 << 62) != 0 }
    public var isFilePage: Bool { raw & (1 << 61) != 0 }
    /// A page of the process's own (copied on write, resident or in swap): dropping its mapping
    /// would lose what was written (a private file mapping would read the file's bytes again).
    public var isPrivateCopy: Bool { (isPresent || isSwapped) && !isFilePage }
}

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

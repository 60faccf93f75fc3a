#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Small file helpers on POSIX calls, each retried on EINTR.
enum FileBytes {
    /// The whole file, or nil when it cannot be opened or read.
    static func contents(of path: String, limit: Int = 1 << 20) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while bytes.count <= limit {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return bytes }
            bytes += chunk.prefix(count)
        }
        return nil
    }

    /// Creates `path` and its parents (mode 0700) when missing; false when that is impossible.
    static func makeDirectories(_ path: String) -> Bool {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o700) != 0 && errno != EEXIST { return false }
        }
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// Renames `path` to `newPath`; false on failure.
    static func move(_ path: String, to newPath: String) -> Bool { rename(path, newPath) == 0 }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}

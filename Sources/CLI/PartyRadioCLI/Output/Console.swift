import Glibc

/// Writes straight to file descriptors: unbuffered, so lines reach a pipe at once, and free of
/// the C `stdout` global that Swift 6 rightly calls shared mutable state.
public enum Console {
    public static func out(_ line: String) { write(line + "\n", to: STDOUT_FILENO) }
    public static func err(_ line: String) { write(line + "\n", to: STDERR_FILENO) }

    public static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Prints a usage or runtime error the way every command does: `Error: …` and, for usage
    /// errors, the hint naming the help page.
    public static func error(_ message: String, hint: String? = nil) {
        err("Error: \(message)")
        if let hint { err(hint) }
    }
}

import Foundation
import Glibc

/// Files in a node's state directory, written whole: to `NAME.tmp` first, then renamed over the
/// file, so that a crash never leaves half of one.
enum StateFile {
    /// Replaces the file at `url` with `data`.
    static func replace(_ url: URL, with data: Data) throws {
        let temporary = url.appendingPathExtension("tmp")
        try data.write(to: temporary)
        guard rename(temporary.path, url.path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
    }
}

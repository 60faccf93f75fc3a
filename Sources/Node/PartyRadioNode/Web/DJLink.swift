import Foundation
import Glibc

/// How commands on the DJ's machine reach the running DJ (`partyradio speakers`, `speaker-set`):
/// its page's origin and the DJ token, in `dj-link.json` in the DJ's state directory, readable by
/// the DJ's user only (docs/SPEAKERS.md). Written once the page is up and removed when the DJ
/// stops; a DJ killed leaves it behind, and the commands then say that no DJ answers there.
public struct DJLink: Codable, Sendable, Equatable {
    public static let fileName = "dj-link.json"
    /// The page's origin, `http://ADDRESS:PORT`.
    public var origin: String
    /// The DJ token (`X-DJ-Token`).
    public var token: String
    /// The DJ's process, as a hint in messages.
    public var pid: Int32

    public init(origin: String, token: String, pid: Int32 = getpid()) {
        self.origin = origin
        self.token = token
        self.pid = pid
    }

    static func url(in directory: URL) -> URL { directory.appendingPathComponent(fileName) }

    /// A link this process wrote, to remove when it stops.
    struct Written: Sendable {
        let link: DJLink
        let directory: URL

        /// Removes the link if it is still this one (a newer DJ's is left alone).
        func remove() { link.remove(from: directory) }
    }

    /// Writes the link whole (a temporary file renamed), mode 0600.
    func write(to directory: URL) throws -> Written {
        let data = try JSONEncoder().encode(self)
        let temporary = Self.url(in: directory).appendingPathExtension("tmp")
        unlink(temporary.path)
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path]) }
        guard rename(temporary.path, Self.url(in: directory).path) == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: Self.url(in: directory).path])
        }
        return Written(link: self, directory: directory)
    }

    /// Removes the link if it is this process's (a newer DJ's is left alone).
    func remove(from directory: URL) {
        guard Self.read(from: directory) == self else { return }
        unlink(Self.url(in: directory).path)
    }

    /// The link a DJ left in `directory`; nil when there is none or it cannot be read.
    public static func read(from directory: URL) -> DJLink? {
        guard let data = try? Data(contentsOf: url(in: directory)) else { return nil }
        return try? JSONDecoder().decode(DJLink.self, from: data)
    }
}

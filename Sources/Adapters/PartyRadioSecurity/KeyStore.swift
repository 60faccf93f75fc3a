import Foundation
import PartyRadioCore

/// Keeps identities in the state directory: `station.key` for a DJ, `listener.key` for
/// everything else. A key file holds the 32-byte Ed25519 seed, readable by its owner only.
public struct KeyStore: Sendable {
    public let directory: URL

    public init(directory: URL) { self.directory = directory }

    public enum Failure: Error, CustomStringConvertible {
        case unreadable(String, String)
        case corrupt(String)
        case unwritable(String, String)

        public var description: String {
            switch self {
            case .unreadable(let path, let why): "Cannot read the key file \(path) (\(why)); check its permissions."
            case .corrupt(let path):
                "The key file \(path) is damaged; move it away to make a new identity (listeners will see a new station key)."
            case .unwritable(let path, let why):
                "Cannot write the key file \(path) (\(why)); pass a writable --state-dir."
            }
        }
    }

    /// Loads the named identity, creating and saving it on first use. A damaged file is an
    /// error and is left as it is.
    public func loadOrCreate(_ name: String) throws(Failure) -> Identity {
        let url = directory.appendingPathComponent("\(name).key")
        let path = url.path
        if FileManager.default.fileExists(atPath: path) {
            let data: Data
            do { data = try Data(contentsOf: url) } catch { throw .unreadable(path, error.localizedDescription) }
            guard let identity = Identity(seed: [UInt8](data)) else { throw .corrupt(path) }
            return identity
        }
        let identity = Identity.generate()
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            // Unique per attempt, not only per process: threads of one process may race too.
            let temporary = directory.appendingPathComponent(
                ".\(name).key.\(getpid()).\(UInt64.random(in: 0...UInt64.max))")
            guard
                FileManager.default.createFile(
                    atPath: temporary.path, contents: Data(identity.seed), attributes: [.posixPermissions: 0o600])
            else { throw POSIXError(.EACCES) }
            // link(2) is atomic and never replaces: a crash never leaves half a key behind, and of
            // several processes making the key at once (a listen and a vote with one new state
            // directory) the first one's key is everybody's.
            let linked = link(temporary.path, path) == 0
            let failure = errno
            unlink(temporary.path)
            if !linked {
                guard failure == EEXIST else { throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO) }
                return try loadOrCreate(name)
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .unwritable(path, error.localizedDescription)
        }
        return identity
    }
}

import Foundation
import PartyRadioCore

extension KeyStore {
    /// The join code of a private station, kept beside its key in `station.code` (the 13
    /// characters, readable by the owner only) so that a restarted DJ keeps its code and its guests.
    /// `renew` (`dj --private --new-code`) replaces it; a damaged file is an error, left as it is.
    public func loadOrCreateCode(renew: Bool = false) throws(Failure) -> JoinCode {
        let url = directory.appendingPathComponent("station.code")
        let path = url.path
        if !renew, FileManager.default.fileExists(atPath: path) {
            let text: String
            do { text = try String(contentsOf: url, encoding: .utf8) } catch {
                throw .unreadable(path, error.localizedDescription)
            }
            guard let code = try? JoinCode(parsing: text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw .corrupt(path)
            }
            return code
        }
        let code = JoinCode.generate()
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let temporary = directory.appendingPathComponent(".station.code.\(getpid())")
            guard
                FileManager.default.createFile(
                    atPath: temporary.path, contents: Data((code.normalized + "\n").utf8),
                    attributes: [.posixPermissions: 0o600])
            else { throw POSIXError(.EACCES) }
            // rename(2) is atomic: a crash leaves the old code or the new one, never half of one.
            guard rename(temporary.path, path) == 0 else {
                let failure = errno
                unlink(temporary.path)
                throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
            }
        } catch {
            throw .unwritable(path, error.localizedDescription)
        }
        return code
    }
}

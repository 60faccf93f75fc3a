import Foundation
import PartyRadioCore

/// The stations this state directory has listened to, and the key each showed the first time
/// (trust on first use, as SSH's known_hosts): `known_stations`, one line per station name,
/// `NAME<TAB>KEY` with the key in base64url. A name is the station's own (its snapshots'), not
/// Avahi's instance name.
///
/// A file that cannot be read is an empty list with a warning (pinning is a safety net, not
/// something the party should stop for); a line that does not parse is skipped.
final class KnownStations {
    static let fileName = "known_stations"
    let url: URL
    private(set) var keys: [String: PublicKey] = [:]

    init(directory: URL) {
        url = directory.appendingPathComponent(Self.fileName)
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 2, let key = PublicKey(base64url: String(fields[1])) else { continue }
            keys[String(fields[0])] = key
        }
    }

    /// Remembers `key` for `name` (replacing another one only when told to trust it) and writes
    /// the file whole to a temporary file first, so a crash never leaves half a list.
    func pin(_ name: String, key: PublicKey) throws {
        keys[name] = key
        let clean = keys.filter { !$0.key.contains("\n") && !$0.key.contains("\t") }
        let text = clean.sorted { $0.key < $1.key }.map { "\($0.key)\t\($0.value.base64url)\n" }.joined()
        try StateFile.replace(url, with: Data(text.utf8))
    }
}

/// What a DJ publishes in its DNS-SD TXT record, and what a listener needs before joining.
///
/// Keys (docs/PROTOCOL.md, "Discovery"): `v` protocol version, `id` station ID (16 hex),
/// `grp` multicast group `239.255.A.B:PORT`, `pk` station public key (base64url),
/// `web` web page port (0: none yet), `priv` private flag (0/1), `mac` the DJ takes votes with a
/// session MAC (1; absent: signed votes only).
public struct StationAdvert: Hashable, Sendable {
    public static let serviceType = "_partyradio._udp"

    public var version: UInt8
    public var stationID: StationID
    public var group: MulticastGroup
    public var publicKey: PublicKey
    public var webPort: UInt16
    public var isPrivate: Bool
    /// The DJ takes guests' votes authenticated by a session MAC instead of a signature
    /// (docs/PROTOCOL.md, "Session MAC"); guests sign them otherwise.
    public var takesSessionVotes: Bool

    public init(
        version: UInt8 = MessageHeader.currentVersion, stationID: StationID, group: MulticastGroup,
        publicKey: PublicKey, webPort: UInt16 = 0, isPrivate: Bool = false, takesSessionVotes: Bool = false
    ) {
        self.version = version
        self.stationID = stationID
        self.group = group
        self.publicKey = publicKey
        self.webPort = webPort
        self.isPrivate = isPrivate
        self.takesSessionVotes = takesSessionVotes
    }

    /// The TXT strings, in a stable order (about 110 bytes in all).
    public var txtRecord: [String] {
        [
            "v=\(version)", "id=\(stationID.hex)", "grp=\(group)", "pk=\(publicKey.base64url)",
            "web=\(webPort)", "priv=\(isPrivate ? 1 : 0)",
        ] + (takesSessionVotes ? ["mac=1"] : [])
    }

    /// The TXT strings of a private station: only that it is one, and the usual strings sealed
    /// under its code (`seal`), so that no ID, key or group shows to whoever lacks the code.
    public func sealedTXTRecord(_ seal: any StationSeal) -> [String] {
        var inner = self
        inner.isPrivate = true
        return ["v=\(version)", "priv=1", "seal=\(seal.seal(txt: inner.txtRecord))"]
    }

    /// The `seal` value of a private station's TXT strings; nil for a public station's.
    public static func sealedBlob(in txtRecord: [String]) -> String? {
        let fields = Self.fields(txtRecord)
        guard fields["priv"] == "1" else { return nil }
        return fields["seal"]
    }

    /// The TXT strings as keys (lower-cased) and values; the first of a repeated key wins.
    static func fields(_ txtRecord: [String]) -> [String: String] {
        var fields: [String: String] = [:]
        for entry in txtRecord {
            guard let equals = entry.firstIndex(of: "=") else { continue }
            let key = String(entry[..<equals]).lowercased()
            if fields[key] == nil { fields[key] = String(entry[entry.index(after: equals)...]) }
        }
        return fields
    }

    public enum Problem: Error, Equatable, Sendable {
        case missing(String)
        case invalid(String)
        case unsupportedVersion(String)
    }

    /// Parses TXT strings. Unknown keys are ignored (later versions may add some);
    /// a missing or malformed required key is an error naming it.
    public init(txtRecord: [String]) throws(Problem) {
        let fields = Self.fields(txtRecord)
        func required(_ key: String) throws(Problem) -> String {
            guard let value = fields[key] else { throw .missing(key) }
            return value
        }
        guard let version = UInt8(try required("v")) else { throw .invalid("v") }
        guard version == MessageHeader.currentVersion else { throw .unsupportedVersion(String(version)) }
        guard let id = StationID(hex: try required("id")) else { throw .invalid("id") }
        guard let group = MulticastGroup(parsing: try required("grp")) else { throw .invalid("grp") }
        guard let key = PublicKey(base64url: try required("pk")) else { throw .invalid("pk") }
        self.version = version
        stationID = id
        self.group = group
        publicKey = key
        webPort = fields["web"].flatMap { UInt16($0) } ?? 0
        isPrivate = fields["priv"] == "1"
        takesSessionVotes = fields["mac"] == "1"
    }
}

import PartyRadioCatalog
import PartyRadioCore

/// The network parsers under fuzzing, one per target. Each takes any bytes; a crash, a hang or
/// a sanitizer report is a bug. Beyond "does not crash", each checks what must hold for every
/// input it accepts.
enum Harness: String, CaseIterable {
    /// The datagram codec: header, every message kind, signature split. Whatever decodes must
    /// encode to a datagram that decodes to the same message.
    case datagram
    /// DNS-SD TXT records: the input split at NUL bytes into strings.
    case txt
    /// HTTP `Range` headers against a file size taken from the input's first bytes.
    case range
    /// Catalog responses: the iTunes Search, Apple Music and chart decoders on the same body.
    case catalog
    /// The web page's form bodies (votes, requests, chat). Whatever parses must survive being
    /// encoded and parsed again.
    case form

    func run(_ bytes: [UInt8]) {
        switch self {
        case .datagram: Self.datagram(bytes)
        case .txt: Self.txt(bytes)
        case .range: Self.range(bytes)
        case .catalog: Self.catalog(bytes)
        case .form: Self.form(bytes)
        }
    }

    struct Signer: PartyRadioCore.Signer {
        let publicKey = PublicKey(bytes: [UInt8](repeating: 7, count: 32))!
        func sign(_ bytes: [UInt8]) -> [UInt8] { [UInt8](repeating: 0, count: Datagram.signatureSize) }
    }

    static func datagram(_ bytes: [UInt8]) {
        guard let datagram = try? Datagram.decode(bytes) else { return }
        let header = datagram.header
        guard
            let again = try? Datagram.encode(
                datagram.message, stationID: header.stationID, sequence: header.sequence, signer: Signer())
        else { fatalError("a decoded \(header.kind) does not encode again") }
        guard let decoded = try? Datagram.decode(again), decoded.message == datagram.message else {
            fatalError("a decoded \(header.kind) does not survive encoding and decoding")
        }
        guard again.count <= Datagram.maxSize else { fatalError("a decoded \(header.kind) encodes too large") }
    }

    static func form(_ bytes: [UInt8]) {
        guard let form = WebForm.parse(bytes) else { return }
        guard form.count <= WebForm.maxFields else { fatalError("a form with \(form.count) fields passed") }
        let body = form.sorted { $0.key < $1.key }.map { WebForm.encode($0.key) + "=" + WebForm.encode($0.value) }
            .joined(separator: "&")
        guard WebForm.parse(Array(body.utf8)) == form else { fatalError("a parsed form does not survive encoding") }
    }

    static func txt(_ bytes: [UInt8]) {
        let strings = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        guard let advert = try? StationAdvert(txtRecord: strings) else { return }
        guard let again = try? StationAdvert(txtRecord: advert.txtRecord), again.stationID == advert.stationID,
            again.publicKey == advert.publicKey, again.group == advert.group
        else { fatalError("a parsed advert does not survive its own TXT record") }
    }

    static func range(_ bytes: [UInt8]) {
        guard bytes.count >= 8 else { return }
        let size = Int64(bitPattern: bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }) & Int64.max >> 16
        let header = String(decoding: bytes.dropFirst(8), as: UTF8.self)
        switch ByteRange.resolve(header: header, size: size) {
        case .full, .unsatisfiable:
            break
        case .partial(let start, let end):
            guard 0 <= start, start <= end, end < size else {
                fatalError("range \(start)-\(end) outside a file of \(size) bytes for '\(header)'")
            }
        }
    }

    static func catalog(_ bytes: [UInt8]) {
        _ = try? ITunesDecoder.decode(bytes, contentType: "application/json")
        _ = try? AppleMusicDecoder.decode(bytes, contentType: "application/json")
        _ = try? ChartFeedDecoder.decode(bytes, contentType: "application/json")
    }
}

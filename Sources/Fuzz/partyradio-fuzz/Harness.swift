import Glibc
import PartyRadioCatalog
import PartyRadioCore
import PartyRadioLive
import PartyRadioSecurity

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
    /// A private station's sealed datagrams and TXT record (libsodium's XChaCha20-Poly1305 under
    /// a fixed code): the input as a datagram, as a TXT blob, and as a mask flipping bits of a
    /// valid sealed datagram. Nothing but the untouched datagram may open, and nothing that opens
    /// may pass the private DJ's filter unless it is the real one.
    case sealed
    /// Unicast DNS-SD: the input as a name and a TXT string in wire format (as ldns hands over what
    /// a DNS server answered) and as a BIND key file (`--dns-key`). What parses stays in bounds, and
    /// what is escaped for ldns is printable ASCII.
    case dns
    /// Votes with a session MAC (real keys, libsodium): the input as a datagram through a DJ's
    /// filter that takes MACs, and as a mask flipping bits of a guest's genuine MAC vote. Only the
    /// untouched vote passes; nothing else does, whatever it claims.
    case session
    /// Admission cookies (docs/PROTOCOL.md, "Admission cookies"): the input as a datagram to a DJ
    /// whose open budget is spent, and as a cookie challenge to a guest. A challenge goes only to
    /// the sender's address, echoes its sequence number and is never larger than what it answers
    /// (no amplification); only the sender's own cookie reaches the reserve; a guest takes a
    /// challenge only when it echoes the sequence number of a datagram it sent there.
    case cookie
    /// Live audio (docs/LIVE.md): the input as a frame's data shard (what parses is its shard
    /// again), as a run of live frame and repair bodies through a jitter buffer on real ISA-L and
    /// their packets through libopus (every frame time released once, in order, and counted), and
    /// as k data shards whose ISA-L parity gives them back from any k of the k + m.
    case live
    /// A live DJ's followed MPRIS player (docs/LIVE.md, "Now playing from the player"): the input as
    /// metadata entries of any key and D-Bus type (a key byte, a type byte, a length byte, then the
    /// value), a playback status and a position, through `LivePlayerState.parse`. What it keeps stays
    /// within its limits and shows no control character, and the DJ machine takes it.
    case player

    func run(_ bytes: [UInt8]) {
        switch self {
        case .datagram: Self.datagram(bytes)
        case .txt: Self.txt(bytes)
        case .range: Self.range(bytes)
        case .catalog: Self.catalog(bytes)
        case .form: Self.form(bytes)
        case .sealed: Self.sealed(bytes)
        case .dns: Self.dns(bytes)
        case .session: Self.session(bytes)
        case .cookie: Self.cookie(bytes)
        case .live: Self.live(bytes)
        case .player: Self.player(bytes)
        }
    }

    struct Signer: PartyRadioCore.Signer {
        let publicKey = PublicKey(bytes: [UInt8](repeating: 7, count: 32))!
        func sign(_ bytes: [UInt8]) -> [UInt8] { [UInt8](repeating: 0, count: Datagram.signatureSize) }
    }

    struct SessionSigner: PartyRadioCore.SessionSigner {
        let publicKey = Signer().publicKey
        func mac(_ bytes: [UInt8]) -> [UInt8] { [UInt8](repeating: 0, count: Datagram.sessionMACSize) }
    }

    static func datagram(_ bytes: [UInt8]) {
        guard let datagram = try? Datagram.decode(bytes) else { return }
        let header = datagram.header
        let again =
            header.authentication == .session
            ? try? Datagram.encode(
                datagram.message, stationID: header.stationID, sequence: header.sequence, session: SessionSigner(),
                fallback: Signer(), cookie: header.cookie)
            : try? Datagram.encode(
                datagram.message, stationID: header.stationID, sequence: header.sequence, signer: Signer(),
                cookie: header.cookie)
        guard let again else { fatalError("a decoded \(header.kind) does not encode again") }
        // The admission cookie rides only on a guest's kinds, and nothing but the challenge is unauthenticated.
        guard header.cookie == nil || header.kind.takesCookie,
            (header.authentication == .unsigned) == header.kind.isUnauthenticated
        else { fatalError("a decoded \(header.kind) has a cookie or authentication it may not have") }
        guard let decoded = try? Datagram.decode(again), decoded.message == datagram.message,
            decoded.header.authentication == header.authentication, decoded.header.cookie == header.cookie
        else {
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
        // A response's head line as the HTTP clients read it (status or field).
        if case .field(let name, _) = HTTPHeaderLine(String(decoding: bytes, as: UTF8.self)), name.contains(":") {
            fatalError("a header field's name ran past its colon")
        }
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

    /// The code every `sealed` run uses; its keys are derived once (Argon2id is slow on purpose).
    static let seal = CodeSeal(code: JoinCode(entropy: [1, 2, 3, 4, 5, 6, 7, 8, 9]))
    static let station = Identity(seed: [UInt8](repeating: 3, count: 32))!
    static let guest = Identity(seed: [UInt8](repeating: 4, count: 32))!
    static let genuine = seal.seal(
        datagram: try! Datagram.encode(
            .vote(Vote(trackID: "t", choice: .up)), stationID: station.stationID, sequence: 1, signer: guest))

    struct Verifier: DatagramVerifier {
        func verify(_ datagram: Datagram) -> Bool { Sodium.verify(datagram) }
        var seal: (any StationSeal)? { Harness.seal }
    }

    static func sealed(_ bytes: [UInt8]) {
        // Any bytes as a sealed datagram: they do not open (no one without the key can forge a tag).
        if seal.open(datagram: SealedDatagram.marker + bytes) != nil {
            fatalError("random bytes opened as a sealed datagram")
        }
        _ = seal.open(txt: String(decoding: bytes, as: UTF8.self))
        // The input as bit flips over a genuine sealed datagram: only no flip at all opens.
        var tampered = genuine
        for (index, mask) in bytes.prefix(genuine.count).enumerated() { tampered[index] ^= mask }
        let opened = seal.open(datagram: tampered)
        if (opened != nil) != (tampered == genuine) { fatalError("a tampered sealed datagram opened") }
        // Through a private DJ's filter: only the genuine datagram passes.
        var filter = DatagramFilter(verifier: Verifier())
        let from = PeerAddress(host: "10.0.0.2", port: 4000)
        let accepted = filter.accept(
            tampered, from: from, at: LocalTime(ns: 0), policy: .listenersOf(station.stationID))
        if (accepted != nil) != (tampered == genuine) {
            fatalError("the private DJ's filter let a tampered datagram in")
        }
        _ = filter.accept(bytes, from: from, at: LocalTime(ns: 0), policy: .listenersOf(station.stationID))
    }

    /// A DJ that takes MACs, and a guest's genuine MAC vote to it.
    struct SessionVerifier: DatagramVerifier {
        func verify(_ datagram: Datagram) -> Bool { Sodium.verify(datagram) }
        func sessionKey(with peer: PublicKey) -> SessionKey? { Harness.station.sessionKey(with: peer) }
        func verify(_ datagram: Datagram, sessionKey key: SessionKey) -> Bool {
            Sodium.verify(datagram, sessionKey: key)
        }
    }
    static let genuineMACVote = try! Datagram.encode(
        .vote(Vote(trackID: "t", choice: .up)), stationID: station.stationID, sequence: 1,
        session: guest.sessionSigner(for: station.publicKey)!, fallback: guest)

    static func session(_ bytes: [UInt8]) {
        let from = PeerAddress(host: "10.0.0.2", port: 4000)
        let policy = SenderPolicy.listenersOf(station.stationID)
        // The input as it is: nothing passes but the genuine vote itself (the fuzzer may learn its
        // bytes from the comparison below); random bytes make no signature or MAC that checks out.
        var filter = DatagramFilter(verifier: SessionVerifier())
        if let inbound = filter.accept(bytes, from: from, at: LocalTime(ns: 0), policy: policy),
            bytes != genuineMACVote
        {
            fatalError("fuzzed bytes passed as a \(inbound.message.kind) from \(inbound.sender)")
        }
        // The input as bit flips over the genuine MAC vote: only no flip at all passes.
        var tampered = genuineMACVote
        for (index, mask) in bytes.prefix(tampered.count).enumerated() { tampered[index] ^= mask }
        var fresh = DatagramFilter(verifier: SessionVerifier())
        let accepted = fresh.accept(tampered, from: from, at: LocalTime(ns: 0), policy: policy)
        if (accepted != nil) != (tampered == genuineMACVote) {
            fatalError("a tampered MAC vote passed the DJ's filter")
        }
    }

    /// Checks no signature: what the `cookie` target asks is which datagrams reach the check.
    struct Refuser: DatagramVerifier {
        func verify(_ datagram: Datagram) -> Bool { false }
    }

    static func cookie(_ bytes: [UInt8]) {
        let from = PeerAddress(host: "10.0.0.2", port: 4000)
        let policy = SenderPolicy.listenersOf(station.stationID)
        let secret: (UInt64, UInt64) = (11, 12)
        let cookies = AddressCookies(secret: secret)
        // One verification a second for senders that show nothing: spent by the first datagram.
        var filter = DatagramFilter(
            verifier: Refuser(), limits: .init(verificationsPerSecond: 2, reservedPerSecond: 1), cookieSecret: secret)
        let spender = try! Datagram.encode(.query(Query()), stationID: station.stationID, sequence: 1, signer: guest)
        _ = filter.accept(spender, from: PeerAddress(host: "10.0.0.3", port: 1), at: LocalTime(ns: 0), policy: policy)
        var effects: [Effect] = []
        let before = filter.drops.counts
        _ = filter.accept(bytes, from: from, at: LocalTime(ns: 1), policy: policy, logInto: &effects)
        let decoded = try? Datagram.decode(bytes)
        for case .send(let message, let to, let id) in effects {
            guard case .cookieChallenge(let challenge) = message, let header = decoded?.header else {
                fatalError("the DJ's filter sent \(message.kind) for a datagram")
            }
            let size = (try? Datagram.encode(message, stationID: id, sequence: 1, signer: Signer()))?.count ?? .max
            guard to == .peer(from), id == station.stationID, challenge.echo == header.sequence,
                challenge.cookie == cookies.cookie(for: header.sender, at: from, now: LocalTime(ns: 1)),
                size <= bytes.count
            else { fatalError("a challenge that is not the sender's, or larger than what it answers") }
        }
        // Verified (here: refused as bad_signature) over the open share only with the sender's own cookie.
        let checked = ["bad_signature", "bad_mac"].contains {
            filter.drops.counts[$0, default: 0] > before[$0, default: 0]
        }
        if checked {
            guard let header = decoded?.header, let cookie = header.cookie,
                cookies.isValid(cookie, for: header.sender, at: from, now: LocalTime(ns: 1))
            else { fatalError("a datagram without its sender's cookie reached the reserve") }
        }
        // The input as a challenge to a guest that sent one query: taken only when it echoes that query.
        var reader = ByteReader(bytes)
        guard let challenge = try? CookieChallenge(from: &reader) else { return }
        var outbox = Outbox(signer: guest)
        _ = outbox.datagram(for: .query(Query()), station: station.stationID, now: LocalTime(ns: 0), realTimeNs: 77)
        let taken = outbox.takeCookie(challenge, from: station.stationID, now: LocalTime(ns: 1))
        if taken != (challenge.echo == 77) { fatalError("a guest took a challenge that answers nothing it sent") }
    }

    static func dns(_ bytes: [UInt8]) {
        mdnsReply(bytes)
        if let labels = DNSName.labels(wire: bytes) {
            guard labels.allSatisfy({ !$0.isEmpty && $0.count <= 63 }), labels.reduce(0, { $0 + $1.count + 1 }) <= 255
            else { fatalError("a wire name out of bounds was accepted") }
            for label in labels {
                let escaped = DNSName.escapeLabel(String(decoding: label, as: UTF8.self))
                // Printable ASCII; a space only escaped (ldns would split the record there).
                let raw = Array(escaped.utf8)
                guard raw.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }),
                    raw.indices.allSatisfy({ raw[$0] != 0x20 || ($0 > 0 && raw[$0 - 1] == 0x5C) })
                else {
                    fatalError("an escaped label is not printable ASCII: \(escaped)")
                }
            }
            _ = DNSName.instance(wire: bytes)
            _ = DNSName.text(wire: bytes)
        }
        if let string = DNSName.txtString(wire: bytes) {
            guard DNSName.quoteTXT(string).utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
                fatalError("a quoted TXT string is not printable ASCII")
            }
        }
        // The same bytes as A and AAAA data: only 4 and 16 bytes give an address, and what an AAAA
        // record gives is one the C library reads back to the same 16 bytes, and no link-local one.
        if let text = DNSName.ipv4(wire: bytes) {
            var address = in_addr()
            guard bytes.count == 4, inet_pton(AF_INET, text, &address) == 1,
                withUnsafeBytes(of: &address, { Array($0) }) == bytes
            else { fatalError("A data \(bytes) read as \(text)") }
        }
        if let text = DNSName.ipv6(wire: bytes) {
            var address = in6_addr()
            guard bytes.count == 16, inet_pton(AF_INET6, text, &address) == 1,
                withUnsafeBytes(of: &address, { Array($0) }) == bytes, !text.hasPrefix("fe8"), !text.contains("%")
            else { fatalError("AAAA data \(bytes) read as \(text)") }
        }
        // The input split at NUL bytes as a TXT record from the domain: the lease comes off, every
        // other string stays the advert's, in order; a lease that is not one decimal number is
        // never taken for one.
        let strings = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        // By bytes, as DNS data is (String comparison would fold canonically equivalent text, and
        // a combining mark after "lease=" would hide the prefix from `hasPrefix`).
        let (advert, stamp) = DNSLease.split(strings)
        func isLease(_ string: String) -> Bool {
            Array(string.utf8) == Array(DNSLease.key.utf8) || string.utf8.starts(with: (DNSLease.key + "=").utf8)
        }
        guard advert.map({ Array($0.utf8) }) == strings.filter({ !isLease($0) }).map({ Array($0.utf8) }) else {
            fatalError("the lease split took advert strings or left a lease in")
        }
        let leases = strings.filter(isLease)
        if case .until(let expiry) = stamp {
            let digits = leases.first.map { Array($0.utf8.dropFirst(DNSLease.key.utf8.count + 1)) } ?? []
            guard leases.count == 1, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                Int64(String(decoding: digits, as: UTF8.self)) == expiry, expiry >= 0
            else { fatalError("\(leases) taken for a lease until \(expiry)") }
        }
        if let key = try? TSIGKey(keyFile: String(decoding: bytes, as: UTF8.self)) {
            guard TSIGKey.algorithms.contains(key.algorithm), !key.secret.isEmpty, !key.name.isEmpty else {
                fatalError("a key file without a usable key was accepted")
            }
        }
    }

    /// A one-shot mDNS reply (what any host on the link may send a guest that names its station):
    /// read for the instance and its target, every field in bounds.
    static func mdnsReply(_ bytes: [UInt8]) {
        guard bytes.count >= 2 else { return }
        let id = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
        let name = [Array("Mem".utf8), Array("_partyradio".utf8), Array("_udp".utf8), Array("local".utf8)]
        let host = [Array("mem1".utf8), Array("local".utf8)]
        guard let records = MDNSOneShot.parse(bytes, id: id, name: name, knownTarget: host) else { return }
        guard records.ipv4.allSatisfy({ $0.count == 4 }), records.ipv6.allSatisfy({ $0.count == 16 }),
            (records.txt ?? []).allSatisfy({ $0.utf8.count <= 255 * 3 }),
            (records.target ?? []).allSatisfy({ !$0.isEmpty && $0.count <= 63 })
        else { fatalError("a one-shot mDNS reply was read out of bounds") }
    }

    static func catalog(_ bytes: [UInt8]) {
        _ = try? ITunesDecoder.decode(bytes, contentType: "application/json")
        _ = try? AppleMusicDecoder.decode(bytes, contentType: "application/json")
        _ = try? ChartFeedDecoder.decode(bytes, contentType: "application/json")
    }

    static func player(_ bytes: [UInt8]) {
        let keys = ["xesam:title", "xesam:artist", "xesam:album", "mpris:artUrl", "mpris:length", "mpris:trackid"]
        var values: [PlayerValue] = []
        var metadata: [String: PlayerValue] = [:]
        var index = 0
        while index + 3 <= bytes.count {
            let (key, type, length) = (Int(bytes[index]), bytes[index + 1], Int(bytes[index + 2]))
            index += 3
            let payload = Array(bytes[index..<min(bytes.count, index + length)])
            index += payload.count
            var number: UInt64 = 0
            for byte in payload.prefix(8) { number = number << 8 | UInt64(byte) }
            let text = String(decoding: payload, as: UTF8.self)
            let value: PlayerValue =
                switch type % 9 {
                case 0: .string(text)
                case 1: .objectPath(text)
                case 2: .strings(payload.split(separator: 0).map { String(decoding: $0, as: UTF8.self) })
                case 3: .int64(Int64(bitPattern: number))
                case 4: .uint64(number)
                case 5: .int32(Int32(truncatingIfNeeded: number))
                case 6: .double(Double(bitPattern: number))
                case 7: .bool(number != 0)
                default: .other(signature: text)
                }
            values.append(value)
            metadata[key < keys.count ? keys[key] : text] = value
        }
        let state = LivePlayerState.parse(
            player: values.first.map { "\($0)" } ?? "", metadata: metadata, status: values.dropFirst().first,
            positionUs: values.dropFirst(2).first)
        if let position = state.positionUs, position < 0 || position > LivePlayerState.maxLengthUs {
            fatalError("a position out of bounds passed: \(position)")
        }
        for shown in [state.player, state.track?.title ?? "", state.track?.artist ?? "", state.track?.album ?? ""] {
            guard shown.utf8.count <= LivePlayerState.maxText, !shown.unicodeScalars.contains(where: \.isNeverShown)
            else { fatalError("text beyond the limit or with a control character passed: \(shown.debugDescription)") }
        }
        if let track = state.track {
            guard !track.title.isEmpty, (0...LivePlayerState.maxLengthUs).contains(track.lengthUs),
                track.trackID.utf8.count <= LivePlayerState.maxTrackID, track.stationTrack.isLive
            else { fatalError("a track that makes no sense passed: \(track)") }
        }
    }

    static func live(_ bytes: [UInt8]) {
        if let frame = LiveFEC.frame(fromShard: bytes, sequence: 1),
            LiveFEC.shard(of: frame, length: bytes.count) != bytes
        {
            fatalError("a data shard that parsed is not its frame's shard")
        }
        liveBodies(bytes)
        liveErasures(bytes)
    }

    /// Records `kind (u8) ‖ length (u16) ‖ body`: an even kind a frame body, an odd one a repair body,
    /// one millisecond apart, the buffer asked for what plays after each.
    private static func liveBodies(_ bytes: [UInt8]) {
        var buffer = LiveJitterBuffer(code: ISALErasureCode())
        guard let decoder = try? OpusDecoder() else { fatalError("no Opus decoder") }
        var reader = ByteReader(bytes)
        var now: DJTime?
        var released: [LivePlayout] = []
        // The resend requests the same arrivals make: never for a frame that came.
        var gaps = LiveGapTracker()
        var came: Set<UInt64> = []
        while let kind = try? reader.readUInt8(), let length = try? reader.read(UInt16.self),
            let body = try? reader.readBytes(min(Int(length), reader.remaining))
        {
            var bodyReader = ByteReader(body)
            if kind % 2 == 0 {
                guard let frame = try? LiveFrame(from: &bodyReader) else { continue }
                let at = now ?? frame.firstSample
                _ = buffer.insert(frame, now: at)
                gaps.received(frame)
                came.insert(frame.sequence)
                _ = try? decoder.decode(frame.payload)
                now = DJTime(ns: at.ns &+ 1_000_000)
            } else {
                guard let repair = try? LiveRepair(from: &bodyReader), let at = now else { continue }
                _ = buffer.insert(repair, now: at)
                gaps.received(repair)
                now = DJTime(ns: at.ns &+ 1_000_000)
            }
            if let at = now {
                for request in gaps.due(at: at.ns) where request.sequences.contains(where: came.contains) {
                    fatalError("asked again for a frame that came: \(request)")
                }
            }
            guard let at = now, at.ns < Int64.max / 2 else { return }
            for _ in 0..<10_000 {
                guard let decision = buffer.next(at: DJTime(ns: at.ns + buffer.settings.delayNs)) else { break }
                if let last = released.last, decision.sequence <= last.sequence {
                    fatalError("the buffer released frame \(decision.sequence) after \(last.sequence)")
                }
                released.append(decision)
                _ = try? decoder.pcm(for: decision)
            }
        }
        guard buffer.counters.released == released.count else {
            fatalError("\(released.count) frame times released, \(buffer.counters.released) counted")
        }
    }

    /// k (1-16) data shards cut from the input, their m (1-8) parity shards by ISA-L, and up to m of
    /// the k + m erased as the input says: the data comes back whole.
    private static func liveErasures(_ bytes: [UInt8]) {
        guard bytes.count >= 4 else { return }
        let k = Int(bytes[0] % 16) + 1
        let m = Int(bytes[1] % 8) + 1
        let length = max(1, (bytes.count - 3) / k)
        let data = (0..<k).map { index in
            (0..<length).map { offset in
                let at = 3 + index * length + offset
                return at < bytes.count ? bytes[at] : 0
            }
        }
        let code = ISALErasureCode()
        let parity = code.parity(of: data, parityCount: m)
        var shards: [[UInt8]?] = data + parity
        var pattern = SplitMix64(seed: UInt64(bytes[2]) | UInt64(bytes.count) << 8)
        for _ in 0..<m { shards[Int(pattern.next() % UInt64(k + m))] = nil }
        guard code.recover(shards, dataCount: k) == data else {
            fatalError("ISA-L did not give back \(k) data shards from \(shards.compactMap { $0 }.count) of \(k + m)")
        }
    }
}

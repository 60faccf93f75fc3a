/// The DJ's chat: which lines it delivered, from whom, in what order; rate limits; muted guests.
///
/// Exactly once and in order per sender: a sender's message IDs only go up, so a retry of the
/// last delivered line is recognised (``ChatAck/Status/duplicate``) and an older one refused
/// (``ChatAck/Status/stale``). Everything kept per sender is bounded, so a guest who makes up
/// keys cannot grow it without end.
public struct ChatBook: Sendable, Equatable, Codable {
    /// A sender may deliver this many lines per ``rateWindowNs``.
    public static let rateLimit = 5
    public static let rateWindowNs = Nanos.seconds(10)
    /// The last lines kept for the DJ's view (and late joiners), oldest first.
    public static let keptLines = 100
    /// Senders remembered at most; the least recently heard is forgotten first.
    public static let maxSenders = 4096

    private struct Sender: Sendable, Equatable, Codable {
        /// The last delivered ID; nil until the first line.
        var lastID: UInt64?
        var recent: [DJTime]
        var lastHeard: DJTime
    }

    private var senders: [PublicKey: Sender] = [:]
    /// Muted guests, by key fingerprint.
    public private(set) var muted: Set<String> = []
    public private(set) var lines: [ChatLine] = []

    public init() {}

    /// A guest's line at DJ time `now`: delivered (returned with the status) or refused.
    public mutating func submit(_ send: ChatSend, from key: PublicKey, now: DJTime) -> (ChatAck, ChatLine?) {
        func ack(_ status: ChatAck.Status, retryAfterNs: Int64 = 0) -> (ChatAck, ChatLine?) {
            let retry = UInt32(clamping: max(0, retryAfterNs) / Nanos.perMillisecond)
            return (ChatAck(messageID: send.messageID, status: status, retryAfterMs: retry), nil)
        }
        guard !muted.contains(key.fingerprint) else { return ack(.muted) }
        guard let text = Self.validText(send.text) else { return ack(.rejected) }
        var sender = senders[key] ?? Sender(lastID: nil, recent: [], lastHeard: now)
        sender.lastHeard = now
        if let last = sender.lastID {
            if send.messageID == last { return ack(.duplicate) }
            if send.messageID < last { return ack(.stale) }
        }
        sender.recent = sender.recent.filter { now - $0 < Self.rateWindowNs }
        if sender.recent.count >= Self.rateLimit, let oldest = sender.recent.first {
            senders[key] = sender
            return ack(.rateLimited, retryAfterNs: oldest + Self.rateWindowNs - now)
        }
        sender.lastID = send.messageID
        sender.recent.append(now)
        remember(key, sender)
        let name = GuestName.fromNetwork(send.name)?.value ?? key.fingerprint
        let line = ChatLine(sender: key.fingerprint, messageID: send.messageID, name: name, text: text)
        lines.append(line)
        if lines.count > Self.keptLines { lines.removeFirst(lines.count - Self.keptLines) }
        return (ChatAck(messageID: send.messageID, status: .delivered), line)
    }

    public mutating func mute(fingerprint: String) { muted.insert(fingerprint) }
    public mutating func unmute(fingerprint: String) { muted.remove(fingerprint) }

    /// The text as it may be shown: control characters dropped (a chat line is one line, and
    /// escape sequences never reach a terminal), trimmed, 1–280 characters; nil otherwise.
    public static func validText(_ raw: String) -> String? {
        let cleaned = GuestName.cleaned(raw)
        guard !cleaned.isEmpty, cleaned.count <= ChatSend.Limit.characters,
            cleaned.utf8.count <= ChatSend.Limit.textBytes
        else { return nil }
        return cleaned
    }

    private mutating func remember(_ key: PublicKey, _ sender: Sender) {
        if senders[key] == nil, senders.count >= Self.maxSenders,
            let oldest = senders.min(by: { $0.value.lastHeard < $1.value.lastHeard })
        {
            senders.removeValue(forKey: oldest.key)
        }
        senders[key] = sender
    }
}

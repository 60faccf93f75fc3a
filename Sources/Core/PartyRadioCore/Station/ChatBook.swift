/// The DJ's chat: which lines it delivered, from whom, in what order; rate limits; muted guests.
///
/// Limits and mutes hold per key and per machine (``MachineID/key``): fresh keys from one machine
/// share its rate, and a muted guest's machine stays muted under any key or name.
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
    /// The lines each machine delivered lately (any key), for its rate; not saved (a restart
    /// forgets a few seconds of rate).
    private var machines: [String: Sender] = [:]
    /// Muted guests, by key fingerprint.
    public private(set) var muted: Set<String> = []
    /// Muted machines (``MachineID/key``), and the machine muted with each muted fingerprint.
    public private(set) var mutedMachines: Set<String> = []
    private var machineOfMuted: [String: String] = [:]
    public private(set) var lines: [ChatLine] = []

    public init() {}

    /// Whether the guest with key `fingerprint` on `machine` is muted (by key or by machine).
    public func isMuted(_ fingerprint: String, machine: String) -> Bool {
        muted.contains(fingerprint) || mutedMachines.contains(machine)
    }

    /// A guest's line at DJ time `now`: delivered (returned with the status) or refused. A machine
    /// may deliver `machineLimit` lines per ``rateWindowNs``, whatever keys it uses (nil: the key is
    /// its own machine).
    public mutating func submit(
        _ send: ChatSend, from key: PublicKey, machine: String? = nil, machineLimit: Int = ChatBook.rateLimit,
        now: DJTime
    ) -> (ChatAck, ChatLine?) {
        let machine = machine ?? "key:\(key.fingerprint)"
        func ack(_ status: ChatAck.Status, retryAfterNs: Int64 = 0) -> (ChatAck, ChatLine?) {
            let retry = UInt32(clamping: max(0, retryAfterNs) / Nanos.perMillisecond)
            return (ChatAck(messageID: send.messageID, status: status, retryAfterMs: retry), nil)
        }
        guard !isMuted(key.fingerprint, machine: machine) else { return ack(.muted) }
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
        var host = machines[machine] ?? Sender(lastID: nil, recent: [], lastHeard: now)
        host.recent = host.recent.filter { now - $0 < Self.rateWindowNs }
        if host.recent.count >= max(1, machineLimit), let oldest = host.recent.first {
            return ack(.rateLimited, retryAfterNs: oldest + Self.rateWindowNs - now)
        }
        host.recent.append(now)
        host.lastHeard = now
        Self.remember(machine, host, in: &machines)
        sender.lastID = send.messageID
        sender.recent.append(now)
        Self.remember(key, sender, in: &senders)
        let name = GuestName.fromNetwork(send.name)?.value ?? key.fingerprint
        let line = ChatLine(sender: key.fingerprint, messageID: send.messageID, name: name, text: text)
        lines.append(line)
        if lines.count > Self.keptLines { lines.removeFirst(lines.count - Self.keptLines) }
        return (ChatAck(messageID: send.messageID, status: .delivered), line)
    }

    /// Mutes a key, and the machine it was heard from (if known): a fresh key or name there stays muted.
    public mutating func mute(fingerprint: String, machine: String? = nil) {
        muted.insert(fingerprint)
        guard let machine else { return }
        mutedMachines.insert(machine)
        machineOfMuted[fingerprint] = machine
    }

    public mutating func unmute(fingerprint: String) {
        muted.remove(fingerprint)
        if let machine = machineOfMuted.removeValue(forKey: fingerprint) { unmute(machine: machine) }
    }

    public mutating func unmute(machine: String) {
        mutedMachines.remove(machine)
        machineOfMuted = machineOfMuted.filter { $0.value != machine }
    }

    /// The machine muted with `fingerprint`, if any.
    public func mutedMachine(of fingerprint: String) -> String? { machineOfMuted[fingerprint] }

    /// The text as it may be shown: control characters dropped (a chat line is one line, and
    /// escape sequences never reach a terminal), trimmed, 1–280 characters; nil otherwise.
    public static func validText(_ raw: String) -> String? {
        let cleaned = GuestName.cleaned(raw)
        guard !cleaned.isEmpty, cleaned.count <= ChatSend.Limit.characters,
            cleaned.utf8.count <= ChatSend.Limit.textBytes
        else { return nil }
        return cleaned
    }

    private static func remember<Key: Hashable>(_ key: Key, _ sender: Sender, in table: inout [Key: Sender]) {
        if table[key] == nil, table.count >= Self.maxSenders,
            let oldest = table.min(by: { $0.value.lastHeard < $1.value.lastHeard })
        {
            table.removeValue(forKey: oldest.key)
        }
        table[key] = sender
    }

    public static func == (a: ChatBook, b: ChatBook) -> Bool {
        a.senders == b.senders && a.muted == b.muted && a.lines == b.lines && a.mutedMachines == b.mutedMachines
            && a.machineOfMuted == b.machineOfMuted
    }

    // What is saved: the senders' last IDs and rates, the mutes and the lines (a book saved before
    // machines were muted has no machines).
    private enum CodingKeys: String, CodingKey {
        case senders, muted, lines, mutedMachines, machineOfMuted
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        senders = try container.decode([PublicKey: Sender].self, forKey: .senders)
        muted = try container.decode(Set<String>.self, forKey: .muted)
        lines = try container.decode([ChatLine].self, forKey: .lines)
        mutedMachines = try container.decodeIfPresent(Set<String>.self, forKey: .mutedMachines) ?? []
        machineOfMuted = try container.decodeIfPresent([String: String].self, forKey: .machineOfMuted) ?? [:]
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(senders, forKey: .senders)
        try container.encode(muted, forKey: .muted)
        try container.encode(lines, forKey: .lines)
        try container.encode(mutedMachines, forKey: .mutedMachines)
        try container.encode(machineOfMuted, forKey: .machineOfMuted)
    }
}

/// Up and down counts for one track.
public struct Tally: Hashable, Sendable, Codable {
    public var up: UInt32
    public var down: UInt32

    public init(up: UInt32 = 0, down: UInt32 = 0) {
        self.up = up
        self.down = down
    }
}

/// The votes on the current track: one per voter key, changeable, reset when the track changes;
/// at most `votersPerAddress` voter keys per source address are counted (fresh keys from one
/// machine are no way around one guest, one vote).
///
/// Kept as a row per voter (``voterRows``), the form the DJ's database stores, so a save compares
/// and writes rows without making them first (with 2,000 voters that was most of a save).
public struct VoteBook: Sendable, Equatable, Codable {
    public private(set) var trackID: String?
    /// Every voter on the track, by key: its choice, the addresses it voted from, the sequence
    /// number of its last vote datagram applied (an older one, replayed after a restart emptied
    /// the replay windows, changes nothing). A key is here while any of the three is set.
    public private(set) var voterRows: [PublicKey: Voter] = [:]
    /// How many keys each address counts for (the rows that list it), for the address limit.
    private var keysAt: [String: Int] = [:]
    /// The counts, kept as votes change (the DJ reads them several times per vote; counting a
    /// thousand voters each time was most of a vote's cost).
    public private(set) var tally = Tally()

    /// One voter's part of the book, as the DJ's database keeps it: a row per voter, so that a
    /// save writes only the voters that changed rather than the whole book.
    public struct Voter: Equatable, Sendable {
        /// Nil once the voter cleared its vote (its sequence still stops replays).
        public var choice: VoteChoice?
        /// The addresses it voted from, sorted.
        public var addresses: [String]
        /// The sequence number of its last vote datagram applied on this track.
        public var sequence: UInt64?

        public init(choice: VoteChoice?, addresses: [String], sequence: UInt64?) {
            self.choice = choice
            self.addresses = addresses
            self.sequence = sequence
        }

        static let empty = Voter(choice: nil, addresses: [], sequence: nil)
    }

    public init(trackID: String? = nil) { self.trackID = trackID }

    /// The book made again from its voters (what ``voterRows`` gave).
    public init(trackID: String?, voterRows: [PublicKey: Voter]) {
        self.init(trackID: trackID)
        for (key, row) in voterRows {
            var row = row
            row.choice = row.choice == .clear ? nil : row.choice
            row.addresses = Array(Set(row.addresses)).sorted()
            put(key, row)
        }
    }

    /// Stores `row` as `key`'s, keeping the counts and the addresses' shares.
    private mutating func put(_ key: PublicKey, _ row: Voter) {
        let old = voterRows[key] ?? .empty
        switch old.choice {
        case .up: tally.up -= 1
        case .down: tally.down -= 1
        case .clear, nil: break
        }
        switch row.choice {
        case .up: tally.up += 1
        case .down: tally.down += 1
        case .clear, nil: break
        }
        if old.addresses != row.addresses {
            for address in old.addresses {
                keysAt[address, default: 1] -= 1
                if keysAt[address] == 0 { keysAt[address] = nil }
            }
            for address in row.addresses { keysAt[address, default: 0] += 1 }
        }
        voterRows[key] = row == .empty ? nil : row
    }

    /// Starts a new track: every vote is forgotten.
    public mutating func reset(trackID: String?) {
        self.trackID = trackID
        voterRows.removeAll()
        keysAt.removeAll()
        tally = Tally()
    }

    /// Records `voter`'s vote on `trackID` and says how it went. Applying the same vote twice
    /// changes nothing, which is what makes retried datagrams safe.
    /// A vote whose datagram `sequence` is not above the voter's last one applied is old (a replay,
    /// or overtaken by a newer vote): it changes nothing and is answered `superseded`, with the vote
    /// as it stands.
    public mutating func apply(
        voter: PublicKey, trackID: String, choice: VoteChoice, from address: String = "", votersPerAddress: Int = .max,
        sequence: UInt64? = nil
    ) -> VoteAck.Status {
        guard let current = self.trackID else { return .noTrack }
        guard current == trackID else { return .staleTrack }
        var row = voterRows[voter] ?? .empty
        if let sequence {
            if let last = row.sequence, sequence <= last { return .superseded }
            row.sequence = sequence
        }
        if choice == .clear {
            row.choice = nil
            row.addresses = []
            put(voter, row)
            return .counted
        }
        if row.choice == nil && !row.addresses.contains(address) && keysAt[address, default: 0] >= votersPerAddress {
            put(voter, row)  // the sequence still stops a replay of this vote
            return .addressLimit
        }
        if !row.addresses.contains(address) {
            row.addresses.insert(address, at: row.addresses.firstIndex { $0 > address } ?? row.addresses.endIndex)
        }
        row.choice = choice
        put(voter, row)
        return .counted
    }

    public func choice(of voter: PublicKey) -> VoteChoice { voterRows[voter]?.choice ?? .clear }

    public static func == (a: VoteBook, b: VoteBook) -> Bool {
        a.trackID == b.trackID && a.voterRows == b.voterRows
    }

    // The JSON an older DJ saved the book as (a file's "votes" book): the choices, the keys by
    // address, the sequences.
    private enum CodingKeys: String, CodingKey {
        case trackID, votes, voters, sequences
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let votes = try container.decode([PublicKey: VoteChoice].self, forKey: .votes)
        let voters = try container.decode([String: Set<PublicKey>].self, forKey: .voters)
        let sequences = try container.decodeIfPresent([PublicKey: UInt64].self, forKey: .sequences) ?? [:]
        var rows: [PublicKey: Voter] = [:]
        for (key, choice) in votes { rows[key, default: .empty].choice = choice }
        for (address, keys) in voters {
            for key in keys { rows[key, default: .empty].addresses.append(address) }
        }
        for (key, sequence) in sequences { rows[key, default: .empty].sequence = sequence }
        self.init(trackID: try container.decodeIfPresent(String.self, forKey: .trackID), voterRows: rows)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(trackID, forKey: .trackID)
        try container.encode(voterRows.compactMapValues(\.choice), forKey: .votes)
        var voters: [String: Set<PublicKey>] = [:]
        for (key, row) in voterRows {
            for address in row.addresses { voters[address, default: []].insert(key) }
        }
        try container.encode(voters, forKey: .voters)
        try container.encode(voterRows.compactMapValues(\.sequence), forKey: .sequences)
    }
}

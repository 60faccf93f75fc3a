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
public struct VoteBook: Sendable, Equatable, Codable {
    public private(set) var trackID: String?
    private var votes: [PublicKey: VoteChoice] = [:]
    /// The keys whose votes count, by the address they voted from.
    private var voters: [String: Set<PublicKey>] = [:]
    /// The sequence number of each voter's last vote datagram applied on this track (saved with
    /// the station): an older one, replayed after a restart emptied the replay windows, changes
    /// nothing. Optional so that books saved before it was kept still load.
    private var sequences: [PublicKey: UInt64]? = [:]
    /// The counts, kept as votes change (the DJ reads them several times per vote; counting a
    /// thousand voters each time was most of a vote's cost). Not saved: made again on load.
    public private(set) var tally = Tally()

    private enum CodingKeys: String, CodingKey {
        case trackID, votes, voters, sequences
    }

    public init(trackID: String? = nil) { self.trackID = trackID }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        trackID = try container.decodeIfPresent(String.self, forKey: .trackID)
        votes = try container.decode([PublicKey: VoteChoice].self, forKey: .votes)
        voters = try container.decode([String: Set<PublicKey>].self, forKey: .voters)
        sequences = try container.decodeIfPresent([PublicKey: UInt64].self, forKey: .sequences)
        tally = Self.count(votes)
    }

    private static func count(_ votes: [PublicKey: VoteChoice]) -> Tally {
        var tally = Tally()
        for choice in votes.values {
            switch choice {
            case .up: tally.up += 1
            case .down: tally.down += 1
            case .clear: break
            }
        }
        return tally
    }

    /// Sets `voter`'s choice, keeping the counts.
    private mutating func set(_ voter: PublicKey, _ choice: VoteChoice?) {
        switch votes[voter] {
        case .up: tally.up -= 1
        case .down: tally.down -= 1
        case .clear, nil: break
        }
        switch choice {
        case .up: tally.up += 1
        case .down: tally.down += 1
        case .clear, nil: break
        }
        votes[voter] = choice
    }

    /// Starts a new track: every vote is forgotten.
    public mutating func reset(trackID: String?) {
        self.trackID = trackID
        votes.removeAll()
        voters.removeAll()
        sequences = [:]
        tally = Tally()
    }

    /// Records `voter`'s vote on `trackID` and says how it went. Applying the same vote twice
    /// changes nothing, which is what makes retried datagrams safe.
    /// A vote whose datagram `sequence` is not above the voter's last one applied is old (a replay,
    /// or overtaken by a newer vote): it changes nothing and is answered with the vote as it stands.
    public mutating func apply(
        voter: PublicKey, trackID: String, choice: VoteChoice, from address: String = "", votersPerAddress: Int = .max,
        sequence: UInt64? = nil
    ) -> VoteAck.Status {
        guard let current = self.trackID else { return .noTrack }
        guard current == trackID else { return .staleTrack }
        if let sequence {
            if let last = sequences?[voter], sequence <= last { return .counted }
            if sequences == nil { sequences = [:] }
            sequences?[voter] = sequence
        }
        if choice == .clear {
            set(voter, nil)
            for host in voters.keys { voters[host]?.remove(voter) }
            voters = voters.filter { !$0.value.isEmpty }
            return .counted
        }
        var here = voters[address] ?? []
        if votes[voter] == nil && !here.contains(voter) && here.count >= votersPerAddress { return .addressLimit }
        here.insert(voter)
        voters[address] = here
        set(voter, choice)
        return .counted
    }

    public func choice(of voter: PublicKey) -> VoteChoice { votes[voter] ?? .clear }
}

extension VoteBook {
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
    }

    /// Every voter on the track, by key.
    public var voterRows: [PublicKey: Voter] {
        var rows: [PublicKey: Voter] = [:]
        for (key, choice) in votes {
            rows[key, default: Voter(choice: nil, addresses: [], sequence: nil)].choice = choice
        }
        for (address, keys) in voters {
            for key in keys {
                rows[key, default: Voter(choice: nil, addresses: [], sequence: nil)].addresses.append(address)
            }
        }
        for (key, sequence) in sequences ?? [:] {
            rows[key, default: Voter(choice: nil, addresses: [], sequence: nil)].sequence = sequence
        }
        for key in rows.keys { rows[key]?.addresses.sort() }
        return rows
    }

    /// The book made again from its voters (what ``voterRows`` gave).
    public init(trackID: String?, voterRows: [PublicKey: Voter]) {
        self.init(trackID: trackID)
        for (key, row) in voterRows {
            if let choice = row.choice { set(key, choice) }
            for address in row.addresses { voters[address, default: []].insert(key) }
            if let sequence = row.sequence { sequences?[key] = sequence }
        }
    }
}

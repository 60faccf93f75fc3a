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

    public init(trackID: String? = nil) { self.trackID = trackID }

    public var tally: Tally {
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

    /// Starts a new track: every vote is forgotten.
    public mutating func reset(trackID: String?) {
        self.trackID = trackID
        votes.removeAll()
        voters.removeAll()
    }

    /// Records `voter`'s vote on `trackID` and says how it went. Applying the same vote twice
    /// changes nothing, which is what makes retried datagrams safe.
    public mutating func apply(
        voter: PublicKey, trackID: String, choice: VoteChoice, from address: String = "", votersPerAddress: Int = .max
    ) -> VoteAck.Status {
        guard let current = self.trackID else { return .noTrack }
        guard current == trackID else { return .staleTrack }
        if choice == .clear {
            votes[voter] = nil
            for host in voters.keys { voters[host]?.remove(voter) }
            voters = voters.filter { !$0.value.isEmpty }
            return .counted
        }
        var here = voters[address] ?? []
        if votes[voter] == nil && !here.contains(voter) && here.count >= votersPerAddress { return .addressLimit }
        here.insert(voter)
        voters[address] = here
        votes[voter] = choice
        return .counted
    }

    public func choice(of voter: PublicKey) -> VoteChoice { votes[voter] ?? .clear }
}

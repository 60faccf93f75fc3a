/// Picks the station a user meant: by exact name, unique name prefix, or station ID (or its prefix).
public enum StationMatcher {
    public enum Outcome<Candidate>: Sendable where Candidate: Sendable {
        case found(Candidate)
        case none
        case ambiguous([Candidate])
    }

    /// - Parameters:
    ///   - query: what the user typed; nil means "the only station there is".
    ///   - candidates: (name, station ID, value) for every visible station.
    public static func match<Candidate: Sendable>(
        _ query: String?, among candidates: [(name: String, id: StationID, value: Candidate)]
    ) -> Outcome<Candidate> {
        guard let query, !query.isEmpty else {
            switch candidates.count {
            case 0: return .none
            case 1: return .found(candidates[0].value)
            default: return .ambiguous(candidates.map(\.value))
            }
        }
        let lowered = query.lowercased()
        let tiers: [(String, StationID) -> Bool] = [
            { name, _ in name == query },
            { _, id in id.hex == lowered },
            { name, _ in name.lowercased() == lowered },
            { name, id in name.lowercased().hasPrefix(lowered) || id.hex.hasPrefix(lowered) },
        ]
        for tier in tiers {
            let hits = candidates.filter { tier($0.name, $0.id) }
            if hits.count == 1 { return .found(hits[0].value) }
            if hits.count > 1 { return .ambiguous(hits.map(\.value)) }
        }
        return .none
    }
}

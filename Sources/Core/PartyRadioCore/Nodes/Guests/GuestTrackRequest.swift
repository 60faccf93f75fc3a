/// A track asked of the DJ (`partyradio request`). The DJ handles a request ID once, so retries
/// never queue twice.
///
/// What is asked for (``Query``): a catalog track ID; title words of a track in the DJ's library;
/// or a search term, which this node resolves in the catalog itself (the first playable result,
/// or the one picked). Words asked for without saying which are tried in the DJ's library first
/// and, when the DJ has no such title, searched in the catalog: a second request, with a higher ID.
public struct GuestTrackRequest: StationRequest {
    /// What the user asked for.
    public enum Query: Equatable, Sendable {
        /// A catalog track ID (`request 617154366`, `request --id …`).
        case catalogID(String)
        /// Title words of a track in the DJ's own library only (`request --library …`).
        case library(String)
        /// A catalog search on this node, result `pick` (1-based) (`request --search …`, `--pick N`).
        case search(String, pick: Int)
        /// The DJ's library first, then the catalog search's result `pick` (`request WORDS…`).
        case words(String, pick: Int)
    }

    /// How the track the DJ answered about was named.
    public enum Resolution: String, Sendable {
        /// By a catalog ID the user gave.
        case catalogID = "catalog_id"
        /// By title words, in the DJ's library.
        case library
        /// By a catalog search on this node.
        case search
    }

    /// The DJ's answer to the request that settled it.
    public struct Answer: Sendable {
        public var ack: RequestAck
        public var resolution: Resolution
        /// The catalog track the search picked (only for ``Resolution/search``).
        public var picked: Track?
        /// The catalog ID asked for (for ``Resolution/catalogID`` and ``Resolution/search``).
        public var trackID: String?
        /// True when the DJ's library had no such title before the catalog was searched.
        public var libraryMissed: Bool
    }

    public let query: Query
    public let name: String
    /// The request being sent now; nil before the start and while the catalog is searched.
    public private(set) var pending: RequestSend?
    private var lastRequestID: UInt64 = 0
    private var searching: String?
    private var libraryMissed = false
    private var picked: Track?

    /// - Parameter name: the guest name the DJ shows with the request.
    public init(_ query: Query, name: String) {
        self.query = query
        self.name = name
    }

    public var message: Message? { pending.map { .requestSend($0) } }

    public mutating func begin(at now: LocalTime, into out: inout [Effect]) {
        switch query {
        case .catalogID(let id): ask(.catalogID(id), now: now)
        case .library(let words), .words(let words, _): ask(.library(words), now: now)
        case .search(let term, _): search(term, into: &out)
        }
    }

    /// Sends `wanted` from now on, under a request ID above every one this request used (the
    /// clock in microseconds, so that a later `request` from the same key is higher still).
    private mutating func ask(_ wanted: RequestSend.Wanted, now: LocalTime) {
        lastRequestID = max(lastRequestID + 1, UInt64(max(1, now.ns / 1000)))
        pending = RequestSend(requestID: lastRequestID, name: name, wanted: wanted)
    }

    private mutating func search(_ term: String, into out: inout [Effect]) {
        searching = term
        pending = nil
        out.append(.catalog(.search(term)))
    }

    private var pick: Int {
        switch query {
        case .search(_, let pick), .words(_, let pick): pick
        case .catalogID, .library: 1
        }
    }

    /// The catalog answered this node's search: ask for the picked result.
    public mutating func take(_ input: NodeInput, into out: inout [Effect]) -> Reading<Answer> {
        guard case .catalog(let answer) = input, let term = searching else { return .ignored }
        switch answer {
        case .results(let answered, let tracks) where answered == term:
            searching = nil
            guard !tracks.isEmpty else {
                let why =
                    libraryMissed
                    ? "No title in the DJ's library matches '\(term)', and the catalog has no playable track for it"
                    : "The catalog has no playable track for '\(term)'"
                return .failed(NodeError(.refused, why + "; try other words."))
            }
            guard pick <= tracks.count else {
                return .failed(
                    NodeError(
                        .usage,
                        "'--pick \(pick)': the search for '\(term)' found \(tracks.count) playable tracks; pick one of "
                            + "1–\(tracks.count)."))
            }
            let track = tracks[pick - 1]
            picked = track
            // The clock is not needed here: the next ID only has to be higher than the last.
            lastRequestID += 1
            pending = RequestSend(requestID: lastRequestID, name: name, wanted: .catalogID(track.id))
            return .changed
        case .tracks(_, let failure?):
            searching = nil
            let sentence = failure.hasSuffix(".") ? failure : failure + "."
            return .failed(NodeError(.catalog, sentence + " Ask by catalog ID, or by title words with --library."))
        case .results, .tracks, .requestedTrack, .webResults:
            return .ignored
        }
    }

    public mutating func read(
        _ message: Message, from station: StationSummary, at now: LocalTime, into out: inout [Effect]
    ) -> Reading<Answer> {
        guard case .requestAck(let ack) = message, let pending, ack.requestID == pending.requestID else {
            return .ignored
        }
        if ack.status == .unknownTrack, case .words(let words, _) = query, case .library = pending.wanted {
            libraryMissed = true
            search(words, into: &out)
            return .changed
        }
        let resolution: Resolution
        let trackID: String?
        switch pending.wanted {
        case .library:
            resolution = .library
            trackID = nil
        case .catalogID(let id):
            resolution = picked == nil ? .catalogID : .search
            trackID = id
        }
        return .answered(
            Answer(ack: ack, resolution: resolution, picked: picked, trackID: trackID, libraryMissed: libraryMissed))
    }

    public func timedOut(at station: StationSummary) -> NodeError {
        searching == nil
            ? unacknowledged("request", at: station)
            : NodeError(.catalog, "The catalog did not answer the search within the timeout; try again.")
    }
}

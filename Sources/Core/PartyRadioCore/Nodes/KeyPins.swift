/// Trust on first use of stations' keys, as SSH's known_hosts: the key each station name showed
/// the first time this state directory met it (`known_stations`). Every command that talks to a
/// station (`listen`, `vote`, `chat`, `request`, `queue`) checks the station it found here first,
/// so that they all refuse a changed key alike.
public struct KeyPins: Sendable {
    /// The key each station name showed before, by the station's own name (its snapshots').
    public var known: [String: PublicKey]
    /// `--trust-new-key`: a station that shows another key than before is accepted (and its new
    /// key remembered) instead of refused.
    public var trustNewKey: Bool

    public init(known: [String: PublicKey] = [:], trustNewKey: Bool = false) {
        self.known = known
        self.trustNewKey = trustNewKey
    }

    /// Whether `station` may be used. A name met for the first time is remembered (`pin`); a known
    /// name must show the key it showed then: another key is reported (`stationKeyChanged`) and
    /// refused with the returned error, or with `trustNewKey` remembered instead. Nil: go on.
    public func check(_ station: StationSummary, into out: inout [Effect]) -> NodeError? {
        let key = station.advert.publicKey
        guard let pinned = known[station.name] else {
            out.append(.pin(name: station.name, key: key))
            return nil
        }
        guard pinned != key else { return nil }
        out.append(.report(.stationKeyChanged(name: station.name, known: pinned.fingerprint, shown: key.fingerprint)))
        if trustNewKey {
            out.append(.pin(name: station.name, key: key))
            return nil
        }
        return NodeError(
            .refused,
            "'\(GuestName.cleaned(station.name))' shows another key (\(key.fingerprint)) than the one this state "
                + "directory met before (\(pinned.fingerprint)): it may be an impostor, so nothing more is sent to it. "
                + "If the DJ really has a new key (a new machine, a wiped state directory), run again with "
                + "--trust-new-key.")
    }
}

import PartyRadioCore

/// The DJ's answer to a guest's action, as the page gets it: `ok`, the status's name, the
/// sentence ``AckText`` says for it, and the tally where there is one (docs/WEB.md).
enum WebAnswer {
    static func json(_ message: Message) -> JSON {
        switch message {
        case .voteAck(let ack):
            return answer(ack.status.isAccepted, ack.status.name, AckText.sentence(ack), tally: ack.tally)
        case .requestVoteAck(let ack):
            return answer(ack.status.isAccepted, ack.status.name, AckText.sentence(ack), tally: ack.tally)
        case .requestAck(let ack):
            var json = answer(ack.status.isQueued, ack.status.name, AckText.sentence(ack), tally: nil)
            if case .object(var pairs) = json, ack.status.isQueued {
                pairs.append(("queue_id", .int(ack.queueID)))
                json = .object(pairs)
            }
            return json
        case .chatAck(let ack):
            return answer(ack.status.isAccepted, ack.status.name, AckText.sentence(ack), tally: nil)
        default:
            return answer(false, "unexpected", "The DJ answered something unexpected.", tally: nil)
        }
    }

    /// A vote counted (and in the tally) that weighs toward crowd skip only once the guest's machine
    /// has been present long enough: `weighs_in_ms` says how long still, and the sentence says so.
    static func json(_ ack: VoteAck, weighsInMs ms: UInt32) -> JSON {
        let seconds = (Int(ms) + 999) / 1000
        let sentence =
            AckText.sentence(ack)
            + " It counts toward a crowd skip once you have listened (or kept this page open) for "
            + "\(seconds) s more."
        guard case .object(var pairs) = answer(true, ack.status.name, sentence, tally: ack.tally) else {
            return .null
        }
        pairs.append(("weighs_in_ms", .int(ms)))
        return .object(pairs)
    }

    private static func answer(_ ok: Bool, _ status: String, _ sentence: String, tally: Tally?) -> JSON {
        var pairs: [(String, JSON)] = [("ok", .bool(ok)), ("status", .string(status)), ("message", .string(sentence))]
        if let tally { pairs.append(("tally", .object([("up", .int(tally.up)), ("down", .int(tally.down))]))) }
        return .object(pairs)
    }
}

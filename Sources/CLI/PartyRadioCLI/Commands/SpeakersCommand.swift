import Foundation
import PartyRadioCore
import PartyRadioCurl
import PartyRadioNode

/// `partyradio speakers` and `partyradio speaker-set`: the running DJ's speakers, asked and set on
/// the DJ's machine through its page's API with the link the DJ keeps in its state directory
/// (``DJLink``, docs/SPEAKERS.md).
enum SpeakersCommand {
    static func list(_ options: Command.SpeakersOptions, context: CommandContext) -> Int32 {
        let answer: DJAnswer
        switch ask(context: context, common: options.common, path: "/api/speakers", form: nil) {
        case .success(let got): answer = got
        case .failure(let problem): return fail(problem.message, context: context)
        }
        guard answer.status == 200, let list = try? JSONDecoder().decode(SpeakerList.self, from: answer.body) else {
            return fail(answer.problem, context: context)
        }
        if options.json {
            // The DJ's own JSON (its strings cleaned there), checked above to be a speaker list.
            context.console.out(String(decoding: answer.body, as: UTF8.self))
        } else if list.speakers.isEmpty {
            context.console.out("No speakers are tuned in to the DJ.")
        } else {
            for speaker in list.speakers { context.console.out(speaker.line) }
        }
        return ExitCode.success.rawValue
    }

    static func set(_ options: Command.SpeakerSetOptions, context: CommandContext) -> Int32 {
        let line = "\(options.who) \(options.change)"
        let answer: DJAnswer
        switch ask(
            context: context, common: options.common, path: "/api/dj", form: ["command": "speaker", "arg": line])
        {
        case .success(let got): answer = got
        case .failure(let problem): return fail(problem.message, context: context)
        }
        guard answer.status == 200, let reply = try? JSONDecoder().decode(DJReply.self, from: answer.body) else {
            return fail(answer.problem, context: context)
        }
        let message = ShownText.cleaned(reply.message)
        guard reply.ok else { return fail(message, context: context) }
        context.console.out(message)
        return ExitCode.success.rawValue
    }

    // MARK: The DJ's page

    /// A speaker as the DJ's `/api/speakers` lists it (every string is the network's: cleaned where shown).
    struct Speaker: Decodable {
        var name: String
        var room: String
        var host: String
        var volume: Int
        var muted: Bool
        var delayMs: Int
        var playing: Bool
        var syncErrorMs: Double?
        var trouble: String?

        enum CodingKeys: String, CodingKey {
            case name, room, host, volume, muted, playing, trouble
            case delayMs = "delay_ms"
            case syncErrorMs = "sync_error_ms"
        }

        var line: String {
            SpeakerBook.Entry.line(
                name: name, room: room, host: host,
                settings: SpeakerSettings(volume: volume, muted: muted, delayMs: delayMs), playing: playing,
                syncErrorMs: syncErrorMs, trouble: trouble ?? "")
        }
    }

    struct SpeakerList: Decodable { var speakers: [Speaker] }
    struct DJReply: Decodable {
        var ok: Bool
        var message: String
    }
    struct Problem: Decodable { var message: String }

    struct DJAnswer {
        var status: Int
        var body: Data

        /// What went wrong, in the DJ's words when it gave some.
        var problem: String {
            let said = (try? JSONDecoder().decode(Problem.self, from: body)).map { ShownText.cleaned($0.message) }
            return said ?? "The DJ answered HTTP \(status)."
        }
    }

    /// Asks the DJ whose link is in the state directory: a GET of `path`, or a POST of `form`.
    static func ask(context: CommandContext, common: CommonOptions, path: String, form: [String: String]?)
        -> Result<DJAnswer, Unreachable>
    {
        let directory = StateDirectory.resolve(common.stateDir, environment: context.environment)
        guard let link = DJLink.read(from: URL(fileURLWithPath: directory)) else {
            return .failure(
                Unreachable(
                    "No DJ runs with the state directory \(directory) (no \(DJLink.fileName) there; start 'partyradio dj', "
                        + "or give its --state-dir)."))
        }
        var headers = [("X-DJ-Token", link.token), ("Accept", "application/json")]
        var body: [UInt8]?
        if let form {
            // The page's own rules for a write: its origin, and a form.
            headers += [("Origin", link.origin), ("Content-Type", "application/x-www-form-urlencoded")]
            body = Array(
                form.sorted { $0.key < $1.key }.map { WebForm.encode($0.key) + "=" + WebForm.encode($0.value) }
                    .joined(separator: "&").utf8)
        }
        // The answer's body (at most 1 MiB: a speaker list is a few kilobytes).
        let receiver = CurlBodyCollector(limit: 1 << 20)
        let outcome: CurlOutcome
        do throws(CurlFailure) {
            outcome = try CurlHandle().perform(
                CurlRequest(url: link.origin + path, headers: headers, timeout: 15, connectTimeout: 3, body: body),
                into: receiver)
        } catch {
            return .failure(Unreachable("Cannot reach the DJ: \(error.detail)"))
        }
        if let failure = outcome.failure {
            return .failure(
                Unreachable(
                    "The DJ that wrote \(directory)/\(DJLink.fileName) (process \(link.pid)) does not answer at "
                        + "\(link.origin): \(failure.detail). Is it still running?"))
        }
        return .success(DJAnswer(status: outcome.status, body: receiver.body))
    }

    /// Why the DJ could not be asked.
    struct Unreachable: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    static func fail(_ message: String, context: CommandContext) -> Int32 {
        context.console.error(message)
        return ExitCode.failure.rawValue
    }
}

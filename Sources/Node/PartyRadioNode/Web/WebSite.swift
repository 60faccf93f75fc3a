import Foundation
import PartyRadioCore
import PartyRadioHTTP
import PartyRadioNet
import PartyRadioSecurity
import Synchronization

/// The DJ's web page and its API (docs/WEB.md): runs on the media server's connection threads,
/// reads the page state from the ``WebHub`` and hands guests' actions to the DJ machine through
/// the inbox, waiting for its answer.
final class WebSite: WebHandler {
    /// How long a guest's action waits for the DJ (a catalog lookup for a request included).
    static let answerTimeout = 10.0
    private let answerTimeout: Double
    static let guestCookie = "pr_guest"
    static let nameCookie = "pr_name"

    private let hub: WebHub
    private let inbox: Inbox<NodeInput>
    private let clock: NodeClock
    /// The DJ's secret (hex); `X-DJ-Token` must carry it.
    let djToken: String
    private let page: [UInt8]
    private let pagePolicy: String
    /// The page's URL for guests, and the DJ's link (with the token).
    let guestURL: String
    let djURL: String
    private let artwork: ArtworkCache?
    /// A private station's door: every path but `POST /api/join` needs its cookie. nil: public.
    private let gate: PrivateGate?
    /// Where a guest's machine is looked up (nil: its address stands for it).
    private let neighbours: NeighbourTable?
    /// The `Host` headers answered (the DJ's own addresses and names): DNS rebinding.
    private let hosts: Mutex<HostList>
    /// The machine's addresses as they are now (nil: the ones given at start are all there is).
    private let currentAddresses: (@Sendable () -> [String])?
    private let fixedAddresses: [String]
    private let hostNames: [String]
    private let serverPort: UInt16
    /// A live station's frames for listening pages (`GET /api/live`); nil: the station plays files.
    private let live: LiveWebRelay?
    /// A live station's followed player's artwork (`GET /art/live:…`); nil: the station plays files.
    let liveArtwork: LiveArtwork?

    /// The hosts answered, and when the machine's addresses were last read for them.
    private struct HostList {
        var hosts: WebHosts
        var readAtNs: Int64?
    }

    /// - Parameters:
    ///   - address: the address the page's URL gives (a `Host` of it is answered);
    ///     `otherAddresses` and `names` are the DJ's other addresses and names, answered too.
    init(
        hub: WebHub, inbox: Inbox<NodeInput>, clock: NodeClock, catalog: (any TrackCatalog)?, address: String,
        port: UInt16, otherAddresses: [String] = [], names: [String] = [], neighbours: NeighbourTable? = nil,
        answerTimeout: Double = WebSite.answerTimeout, gate: PrivateGate? = nil,
        currentAddresses: (@Sendable () -> [String])? = nil, live: LiveWebRelay? = nil
    ) {
        self.live = live
        liveArtwork = live == nil ? nil : LiveArtwork()
        hosts = Mutex(HostList(hosts: WebHosts(port: port, addresses: [address] + otherAddresses, names: names)))
        self.currentAddresses = currentAddresses
        fixedAddresses = [address] + otherAddresses
        hostNames = names
        serverPort = port
        self.neighbours = neighbours
        self.answerTimeout = answerTimeout
        self.gate = gate
        self.hub = hub
        self.inbox = inbox
        self.clock = clock
        djToken = Hex.encode(Sodium.randomBytes(16))
        let origin = URLHost.httpOrigin(address, port: port)
        guestURL = "\(origin)/"
        djURL = "\(origin)/#dj=\(djToken)"
        page = Array(WebPage.html.utf8)
        pagePolicy = Self.contentSecurityPolicy(for: WebPage.html)
        artwork = catalog.map(ArtworkCache.init)
    }

    /// The policy that lets the page's one inline script and one inline style run, by hash, and
    /// nothing else: an injected tag could not run even if one got in.
    static func contentSecurityPolicy(for html: String) -> String {
        func hash(of tag: String) -> String {
            guard let open = html.range(of: "<\(tag)>"),
                let close = html.range(of: "</\(tag)>", range: open.upperBound..<html.endIndex)
            else { return "'none'" }
            let body = Array(html[open.upperBound..<close.lowerBound].utf8)
            return "'sha256-\(Data(Sodium.sha256(body)).base64EncodedString())'"
        }
        return "default-src 'none'; script-src \(hash(of: "script")); style-src \(hash(of: "style")); "
            + "img-src 'self' blob: data:; connect-src 'self'; media-src 'self' blob: https:; base-uri 'none'; "
            + "form-action 'none'; frame-ancestors 'none'"
    }

    // MARK: Routing

    func respond(to request: WebRequest) -> WebResponse {
        // Before anything is read or a cookie given: a page under another name (DNS rebinding)
        // gets nothing of the station's.
        guard admitsHost(request.header("host")) else { return Self.misdirected }
        let (secret, newGuest) = guestSecret(request)
        var response = route(request, guest: secret)
        if newGuest {
            response.headers.append(
                (
                    "Set-Cookie",
                    "\(Self.guestCookie)=\(Base64URL.encode(secret)); Path=/; Max-Age=31536000; HttpOnly; SameSite=Strict"
                ))
        }
        response.headers.append(("X-Content-Type-Options", "nosniff"))
        response.headers.append(("Referrer-Policy", "no-referrer"))
        return response
    }

    private func route(_ request: WebRequest, guest secret: [UInt8]) -> WebResponse {
        let reads = ["GET", "HEAD"]
        if let gate {
            if request.path == "/api/join" {
                guard request.method == "POST" else { return Self.methodNotAllowed("POST") }
                if let refusal = Self.checkWrite(request) { return refusal }
                guard let form = WebForm.parse(request.body) else { return Self.problem(400, "The form is malformed.") }
                return gate.join(request, form: form)
            }
            // The page itself (no station in it) opens for everyone: it asks for the code.
            let page = request.path == "/" || request.path == "/index.html"
            guard page || gate.admits(request) else { return PrivateGate.closed }
        }
        switch request.path {
        case "/", "/index.html":
            guard reads.contains(request.method) else { return Self.methodNotAllowed("GET, HEAD") }
            return WebResponse(
                status: 200,
                headers: [
                    ("Content-Type", "text/html; charset=utf-8"), ("Content-Security-Policy", pagePolicy),
                    ("Cache-Control", "no-cache"),
                ], body: .bytes(page))
        case "/api/state":
            guard reads.contains(request.method) else { return Self.methodNotAllowed("GET, HEAD") }
            let key = Sodium.webGuestKey(secret: secret)
            let vote = hub.vote(of: key)
            let you = JSON.object([
                ("fingerprint", .string(key.fingerprint)), ("name", .string(name(request) ?? "")),
                ("vote", vote == .clear ? .null : .string(vote.name)),
            ])
            var state = hub.current
            // The shared state with `you` added before the closing brace.
            if state.last == UInt8(ascii: "}") && state.count > 2 {
                state.removeLast()
                state += Array(",\"you\":\(you.shown.rendered)}".utf8)
            }
            return Self.json(bytes: state)
        case "/api/events":
            guard reads.contains(request.method) else { return Self.methodNotAllowed("GET, HEAD") }
            return WebResponse(
                status: 200,
                headers: [
                    ("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
                    ("X-Accel-Buffering", "no"),
                ], body: .stream(hub.stream(present: presence(of: request, secret: secret))))
        case "/api/live":
            guard reads.contains(request.method) else { return Self.methodNotAllowed("GET, HEAD") }
            return liveStream(request)
        case "/api/time":
            guard reads.contains(request.method) else { return Self.methodNotAllowed("GET, HEAD") }
            return Self.json(.object([("dj_us", .int(clock.now().ns / 1000))]))
        case "/api/search":
            guard reads.contains(request.method) else { return Self.methodNotAllowed("GET, HEAD") }
            return search(request.query["q"] ?? "")
        case "/qr.svg":
            guard reads.contains(request.method) else { return Self.methodNotAllowed("GET, HEAD") }
            return qrCode(request)
        case "/api/speakers":
            guard reads.contains(request.method) else { return Self.methodNotAllowed("GET, HEAD") }
            guard isDJ(request) else { return Self.problem(403, "Only the DJ's own link may see its speakers.") }
            return Self.json(bytes: hub.speakers)
        case "/api/vote", "/api/request", "/api/request-vote", "/api/chat", "/api/name", "/api/dj", "/api/listen":
            guard request.method == "POST" else { return Self.methodNotAllowed("POST") }
            if let refusal = Self.checkWrite(request) { return refusal }
            guard let form = WebForm.parse(request.body) else { return Self.problem(400, "The form is malformed.") }
            if request.path == "/api/dj" { return dj(request, form: form) }
            if request.path == "/api/name" { return rename(form) }
            if request.path == "/api/listen" { return listening(request, form: form, secret: secret) }
            return guestAction(request, form: form, secret: secret)
        default:
            if request.path.hasPrefix("/art/") {
                guard reads.contains(request.method) else { return Self.methodNotAllowed("GET, HEAD") }
                return art(String(request.path.dropFirst("/art/".count)))
            }
            return Self.problem(404, "No such page.")
        }
    }

    /// Whether `Host` names this server. A machine's addresses change while the DJ runs (a new
    /// DHCP lease, an address added, IPv6 coming up): a `Host` that is not one of the addresses
    /// known reads the machine's addresses again, at most once a second, so a guest who follows
    /// the new address is answered without a restart. Names are not read again; a rebinding page
    /// (the attacker's name) is refused whatever the addresses.
    private func admitsHost(_ host: String?) -> Bool {
        if hosts.withLock({ $0.hosts.admits(host) }) { return true }
        guard let currentAddresses else { return false }
        let now = clock.now().ns
        let due = hosts.withLock { list -> Bool in
            if let read = list.readAtNs, now - read < 1_000_000_000, now >= read { return false }
            list.readAtNs = now
            return true
        }
        guard due else { return false }
        let fresh = WebHosts(port: serverPort, addresses: fixedAddresses + currentAddresses(), names: hostNames)
        hosts.withLock { $0.hosts = fresh }
        return fresh.admits(host)
    }

    /// The answer to a request whose `Host` is not the DJ's (``WebHosts``).
    static var misdirected: WebResponse {
        var response = problem(421, "This is the party's DJ; open the page at its own address.")
        response.headers.append(("X-Content-Type-Options", "nosniff"))
        return response
    }

    /// Writes come only from the page itself: the browser's `Origin` (or, without one, its
    /// `Sec-Fetch-Site`) must say same-origin, and the body must be a form.
    static func checkWrite(_ request: WebRequest) -> WebResponse? {
        let host = request.header("host") ?? ""
        if let origin = request.header("origin") {
            guard !host.isEmpty, origin == "http://\(host)" else {
                return problem(403, "Writes are taken only from the station's own page.")
            }
        } else if request.header("sec-fetch-site") != "same-origin" {
            return problem(403, "Writes are taken only from the station's own page.")
        }
        let type = request.header("content-type")?.lowercased() ?? ""
        guard type.hasPrefix("application/x-www-form-urlencoded") else {
            return problem(415, "Send the form as application/x-www-form-urlencoded.")
        }
        return nil
    }

    // MARK: Guests

    /// The browser's secret from its cookie, or a new one (and whether it is new).
    private func guestSecret(_ request: WebRequest) -> ([UInt8], Bool) {
        if let cookie = request.cookies[Self.guestCookie], let secret = Base64URL.decode(cookie), secret.count == 32 {
            return (secret, false)
        }
        return (Sodium.randomBytes(32), true)
    }

    /// The guest's machine: a browser's TCP connection made the kernel resolve its link-layer
    /// address already, so it is looked up without a probe (still unknown: its address stands for it).
    private func machine(of request: WebRequest) -> MachineID? {
        guard let machine = neighbours?.machine(of: request.clientAddress) else { return nil }
        if case .unresolved(let host) = machine { return .address(host) }
        return machine
    }

    /// The guest's name from its cookie (base64url of UTF-8), if set: cleaned and cut as every name
    /// from the network is, since a browser may send any cookie it likes.
    private func name(_ request: WebRequest) -> String? {
        request.cookies[Self.nameCookie].flatMap(Base64URL.decode)
            .flatMap { GuestName.fromNetwork(String(decoding: $0, as: UTF8.self))?.value }
    }

    /// A page that plays the station says so every second or two (`state=on`), and `state=off`
    /// when it stops: it counts among the listeners as a node does (silent for 3.5 s: gone).
    private func listening(_ request: WebRequest, form: [String: String], secret: [UInt8]) -> WebResponse {
        let message: Message
        switch form["state"] {
        case "on": message = .hello(Hello(listenerName: name(request) ?? ""))
        case "off": message = .leave(Leave())
        default: return Self.problem(400, "Say state=on or state=off.")
        }
        let sequence = hub.sequence(realTimeNs: NodeClock.realTimeNs())
        inbox.push(
            .web(
                WebAction(
                    message: message, guest: Sodium.webGuestKey(secret: secret), address: request.clientAddress,
                    machine: machine(of: request), sequence: sequence, ticket: nil)))
        return Self.json(.object([("ok", .bool(true))]))
    }

    /// What an open event stream tells the DJ: the page's machine is present at the station (its
    /// votes weigh once it has been for `--vote-weight-after`). Not a listener: it plays nothing.
    private func presence(of request: WebRequest, secret: [UInt8]) -> @Sendable () -> Void {
        let guest = Sodium.webGuestKey(secret: secret)
        let address = request.clientAddress
        let machine = machine(of: request)
        return { [hub, inbox] in
            let sequence = hub.sequence(realTimeNs: NodeClock.realTimeNs())
            inbox.push(
                .web(
                    WebAction(
                        message: .query(Query()), guest: guest, address: address, machine: machine,
                        sequence: sequence, ticket: nil)))
        }
    }

    /// A live station's frames as they are sent (docs/WEB.md, "Live stations in the browser"): at
    /// most ``LiveWebRelayState/Limits`` streams in all and per machine; 404 on a station of files.
    private func liveStream(_ request: WebRequest) -> WebResponse {
        guard let live else { return Self.problem(404, "This station is not live.") }
        let machine = machine(of: request)?.key ?? request.clientAddress
        switch live.stream(machine: machine) {
        case .success(let stream):
            return WebResponse(
                status: 200,
                headers: [
                    ("Content-Type", "application/octet-stream"), ("Cache-Control", "no-store"),
                    ("X-Accel-Buffering", "no"),
                ], body: .stream(stream))
        case .failure(let refusal):
            var response = Self.problem(
                503,
                refusal == .full
                    ? "Every live stream of this station is taken; try again soon."
                    : "This machine already plays the live station in another page; close it first.")
            response.headers.append(("Retry-After", "10"))
            return response
        }
    }

    private func rename(_ form: [String: String]) -> WebResponse {
        guard let raw = form["name"], let name = GuestName.fromNetwork(raw) else {
            return Self.problem(400, "A name is 1 to \(ChatSend.Limit.name) bytes of plain text.")
        }
        var response = Self.json(.object([("ok", .bool(true)), ("name", .string(name.value))]))
        response.headers.append(
            (
                "Set-Cookie",
                "\(Self.nameCookie)=\(Base64URL.encode(Array(name.value.utf8))); Path=/; Max-Age=31536000; HttpOnly; SameSite=Strict"
            ))
        return response
    }

    /// A vote, request, request vote or chat line: into the DJ machine as the same message a node
    /// sends, and its answer back as JSON.
    private func guestAction(_ request: WebRequest, form: [String: String], secret: [UInt8]) -> WebResponse {
        let guestName = name(request) ?? ""
        let (ticket, sequence) = hub.ticket(realTimeNs: NodeClock.realTimeNs())
        let message: Message
        switch request.path {
        case "/api/vote":
            guard let track = form["track"], !track.isEmpty, track.utf8.count <= StateSnapshot.Limit.trackID,
                let choice = form["choice"].flatMap(VoteChoice.init(name:))
            else { return Self.problem(400, "A vote needs track=ID and choice=up, down or clear.") }
            message = .vote(Vote(trackID: track, choice: choice))
        case "/api/request":
            if let id = form["id"], !id.isEmpty, id.utf8.count <= StateSnapshot.Limit.trackID {
                message = .requestSend(RequestSend(requestID: sequence, name: guestName, wanted: .catalogID(id)))
            } else if let words = form["words"], !words.trimmingWhitespace().isEmpty,
                words.utf8.count <= RequestSend.Limit.query
            {
                message = .requestSend(RequestSend(requestID: sequence, name: guestName, wanted: .library(words)))
            } else {
                return Self.problem(400, "A request needs id=TRACK_ID or words=TITLE WORDS.")
            }
        case "/api/request-vote":
            guard let queue = form["queue"].flatMap({ UInt32($0) }), queue > 0,
                let choice = form["choice"].flatMap(VoteChoice.init(name:))
            else { return Self.problem(400, "A vote on a request needs queue=N and choice=up, down or clear.") }
            message = .requestVote(RequestVote(queueID: queue, choice: choice))
        default:  // "/api/chat"
            guard let text = form["text"] else { return Self.problem(400, "A chat line needs text=LINE.") }
            message = .chatSend(ChatSend(messageID: sequence, name: guestName, text: text))
        }
        let guest = Sodium.webGuestKey(secret: secret)
        inbox.push(
            .web(
                WebAction(
                    message: message, guest: guest, address: request.clientAddress, machine: machine(of: request),
                    sequence: sequence, ticket: ticket))
        )
        switch hub.wait(for: ticket, timeout: answerTimeout) {
        case .message(let answer)?:
            return Self.json(WebAnswer.json(answer))
        case .voteWeighsLater(let ack, let ms)?:
            return Self.json(WebAnswer.json(ack, weighsInMs: ms))
        default:
            return Self.problem(503, "The DJ did not answer in time; try again.")
        }
    }

    // MARK: The DJ

    /// Whether the request carries the DJ's token.
    private func isDJ(_ request: WebRequest) -> Bool {
        guard let token = request.header("x-dj-token") else { return false }
        return ConstantTime.equal(token, djToken)
    }

    private func dj(_ request: WebRequest, form: [String: String]) -> WebResponse {
        guard isDJ(request) else { return Self.problem(403, "Only the DJ's own link may do that.") }
        let control: DJControl
        switch Self.control(form["command"] ?? "", form["arg"]) {
        case .success(let typed): control = typed
        case .failure(let error): return Self.problem(400, error.message)
        }
        // The page waits for what the DJ made of it, as the terminal says it: a refused `mute`
        // (a name several guests gave) lists the fingerprints to choose from on the page too.
        let (ticket, _) = hub.ticket(realTimeNs: NodeClock.realTimeNs())
        inbox.push(.webDJControl(control, ticket: ticket))
        guard case .djOutcome(let text, let ok)? = hub.wait(for: ticket, timeout: answerTimeout) else {
            return Self.problem(503, "The DJ did not answer in time; try again.")
        }
        return Self.json(
            .object([("ok", .bool(ok)), ("command", .string(control.description)), ("message", .string(text))]))
    }

    /// The DJ's control for a page command (the page's own commands only: it cannot end the
    /// station), or why not. Arguments are one line of at most 100 bytes.
    static func control(_ command: String, _ argument: String?) -> Result<DJControl, ControlError> {
        let unknown = ControlError("Unknown DJ command.")
        let arg = argument?.trimmingWhitespace() ?? ""
        guard arg.utf8.count <= 100, !arg.contains(where: { $0.isNewline }) else { return .failure(unknown) }
        switch command {
        case "skip": return .success(.next)
        case "prev": return .success(.previous)
        case "pause": return .success(.pause)
        case "resume": return .success(.resume)
        case "toggle": return .success(.toggle)
        case "seek", "approve", "drop", "mute", "unmute", "crowd-skip", "speaker":
            guard !arg.isEmpty else { return .failure(unknown) }
            return Result { () throws(ControlError) in try DJControl.parse(verb: command, argument: arg) }
        default: return .failure(unknown)
        }
    }

    // MARK: Search, artwork, QR

    /// Searches through the DJ machine, as every guest action goes: its own queue, then the
    /// catalog (answered within ``CatalogRequest/webSearchTimeoutNs``).
    private func search(_ query: String) -> WebResponse {
        let words = query.trimmingWhitespace()
        guard !words.isEmpty, words.utf8.count <= RequestSend.Limit.query else {
            return Self.problem(400, "Search for 1 to \(RequestSend.Limit.query) bytes of words.")
        }
        let (ticket, _) = hub.ticket(realTimeNs: NodeClock.realTimeNs())
        inbox.push(.webSearch(words, ticket: ticket))
        guard case .searchResults(let found) = hub.wait(for: ticket, timeout: answerTimeout) else {
            return Self.problem(503, "The DJ did not answer in time; try again.")
        }
        let results =
            found.library.map { WebState.result($0, from: "library") }
            + found.catalog.map { WebState.result($0, from: "catalog") }
        return Self.json(
            .object([("results", .array(results)), ("catalog", .string(found.catalogStatus.description))]))
    }

    private func art(_ id: String) -> WebResponse {
        guard !id.isEmpty, id.utf8.count <= StateSnapshot.Limit.trackID, !id.hasPrefix("local:"),
            let image = id.hasPrefix("live:") ? liveArtwork?.image(for: id) : artwork?.image(for: id)
        else { return Self.problem(404, "No artwork for this track.") }
        return WebResponse(
            status: 200, headers: [("Content-Type", image.contentType), ("Cache-Control", "max-age=86400")],
            body: .bytes(image.bytes))
    }

    private func qrCode(_ request: WebRequest) -> WebResponse {
        var url = guestURL
        if request.query["dj"] != nil {
            guard isDJ(request) else { return Self.problem(403, "Only the DJ's own link may show the DJ's QR code.") }
            url = djURL
        }
        guard let svg = Self.qrSVG(url) else { return Self.problem(500, "Could not make the QR code.") }
        return WebResponse(
            status: 200, headers: [("Content-Type", "image/svg+xml"), ("Cache-Control", "no-store")],
            body: .bytes(Array(svg.utf8)))
    }

    // MARK: Responses

    static func json(_ value: JSON, status: UInt32 = 200) -> WebResponse {
        json(bytes: Array(value.shown.rendered.utf8), status: status)
    }

    static func json(bytes: [UInt8], status: UInt32 = 200) -> WebResponse {
        WebResponse(
            status: status,
            headers: [("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "no-store")],
            body: .bytes(bytes))
    }

    static func problem(_ status: UInt32, _ message: String) -> WebResponse {
        json(.object([("ok", .bool(false)), ("message", .string(message))]), status: status)
    }

    static func methodNotAllowed(_ allowed: String) -> WebResponse {
        var response = problem(405, "This path takes \(allowed) only.")
        response.headers.append(("Allow", allowed))
        return response
    }
}

import PartyRadioCore
import PartyRadioHTTP
import Synchronization

/// The door of a private station's web page (docs/WEB.md, "Private stations"): nothing but
/// `POST /api/join` answers without the `pr_code` cookie, and the cookie is given only for the
/// right code. Wrong codes are counted per source address, so guessing 65 bits through the page is
/// out of the question (5 tries a minute an address).
final class PrivateGate: Sendable {
    static let cookie = "pr_code"
    /// Wrong codes one address may send in a ``windowNs``, then 429 until the window passes.
    static let triesPerWindow = 5
    static let windowNs = Nanos.seconds(60)
    /// Addresses remembered at once; a full table is started afresh (as the datagram gate's).
    static let maxAddresses = 4096

    private let code: JoinCode
    /// The cookie's value: a proof derived from the code, never the code itself.
    let proof: String
    private let clock: NodeClock
    private let failures = Mutex<[String: (since: Int64, count: Int)]>([:])

    init(code: JoinCode, proof: String, clock: NodeClock) {
        self.code = code
        self.proof = proof
        self.clock = clock
    }

    /// Whether the request carries the proof.
    func admits(_ request: WebRequest) -> Bool {
        request.cookies[Self.cookie].map { ConstantTime.equal($0, proof) } ?? false
    }

    /// The answer to anything asked without the proof.
    static let closed = WebSite.problem(
        403, "This is a private station: ask the DJ for the join code, then send it to POST /api/join (form code=CODE)."
    )

    /// `POST /api/join` with form `code=CODE`: the cookie for the right code; 403 for a wrong one,
    /// 429 once the address has tried too many.
    func join(_ request: WebRequest, form: [String: String]) -> WebResponse {
        let now = clock.now().ns
        let address = request.clientAddress
        let blocked = failures.withLock { table in
            guard let entry = table[address] else { return false }
            if now - entry.since >= Self.windowNs {
                table[address] = nil
                return false
            }
            return entry.count >= Self.triesPerWindow
        }
        if blocked {
            var response = WebSite.problem(429, "Too many wrong codes from this address; wait a minute and try again.")
            response.headers.append(("Retry-After", "60"))
            return response
        }
        guard let typed = form["code"] else { return WebSite.problem(400, "The form needs code=CODE.") }
        let given = try? JoinCode(parsing: typed)
        guard let given, ConstantTime.equal(given.normalized, code.normalized) else {
            failures.withLock { table in
                if table.count >= Self.maxAddresses && table[address] == nil { table.removeAll() }
                var entry = table[address] ?? (since: now, count: 0)
                entry.count += 1
                table[address] = entry
            }
            return WebSite.problem(403, "That code does not open this station; check it on the DJ's terminal.")
        }
        var response = WebSite.json(.object([("ok", .bool(true)), ("message", .string("Welcome in."))]))
        response.headers.append(
            ("Set-Cookie", "\(Self.cookie)=\(proof); Path=/; Max-Age=86400; HttpOnly; SameSite=Strict"))
        return response
    }
}

import Foundation

/// A receiver that keeps the last response's body, up to a limit (a larger body stops the
/// transfer, `CURLE_WRITE_ERROR`), and its `Content-Type`: for small answers read whole (the DJ's
/// page API, a live player's artwork).
public final class CurlBodyCollector: CurlReceiver {
    public let limit: Int
    public private(set) var body = Data()
    public private(set) var contentType: String?
    /// Whether the body went past ``limit`` (and the transfer was stopped).
    public private(set) var overflowed = false

    public init(limit: Int) { self.limit = limit }

    public func received(status: Int) {
        body.removeAll()
        contentType = nil
    }

    public func received(field name: String, value: String) {
        if name == "content-type" { contentType = value }
    }

    public func received(body bytes: UnsafeRawBufferPointer) -> Bool {
        guard body.count + bytes.count <= limit else {
            overflowed = true
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }

    public func shouldContinue() -> Bool { true }
}

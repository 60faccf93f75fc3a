import COpenSSL
import COpenSSLShim

/// The first error on libcrypto's queue, taken off it: the ``CatalogError/underlying`` error of
/// a `.key` failure that libcrypto explained.
public struct OpenSSLFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// openssl.ERR_get_error!(3)'s packed code; 0 when libcrypto left none.
    public var code: UInt
    /// openssl.ERR_error_string_n!(3)'s text for it.
    public var description: String

    /// Takes the oldest error off this thread's queue and clears the rest.
    static func take() -> OpenSSLFailure {
        let code = openssl.ERR_get_error!()
        openssl.ERR_clear_error!()
        guard code != 0 else { return OpenSSLFailure(code: 0, description: "no detail from libcrypto") }
        var text = [CChar](repeating: 0, count: 256)
        openssl.ERR_error_string_n!(code, &text, text.count)
        let description = String(
            decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return OpenSSLFailure(code: code, description: description)
    }
}

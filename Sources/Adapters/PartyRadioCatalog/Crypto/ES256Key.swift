import COpenSSL
import COpenSSLShim

/// An Apple `.p8` private key (PKCS#8 PEM, EC P-256) that signs developer tokens with libcrypto.
///
/// `@unchecked Sendable`: the wrapped `EVP_PKEY` is never mutated after loading, and OpenSSL 3
/// allows concurrent signing with one key as long as each call has its own `EVP_MD_CTX`.
public final class ES256Key: @unchecked Sendable {
    private let key: OpaquePointer

    /// Loads a PEM private key and checks that it is an EC key on P-256 (what ES256 means).
    public init(pem: [UInt8]) throws(CatalogError) {
        // libcrypto is loaded here, for a key only (COpenSSLShim); every call below goes through `openssl`.
        guard prcrypto_load() == 0 else { throw CatalogError(.key, String(cString: prcrypto_load_error()) + ".") }
        openssl.ERR_clear_error!()
        let loaded: OpaquePointer? = pem.withUnsafeBytes { buffer in
            guard let bio = openssl.BIO_new_mem_buf!(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { _ = openssl.BIO_free!(bio) }
            return openssl.PEM_read_bio_PrivateKey!(bio, nil, nil, nil)
        }
        guard let loaded else {
            let failure = OpenSSLFailure.take()
            throw CatalogError(
                .key,
                "The key is not a PEM private key (\(failure)); pass the AuthKey_XXXXXXXXXX.p8 file "
                    + "downloaded from Apple Developer.", underlying: failure)
        }
        guard openssl.EVP_PKEY_get_base_id!(loaded) == EVP_PKEY_EC, Self.curveName(loaded) == "prime256v1" else {
            openssl.EVP_PKEY_free!(loaded)
            throw CatalogError(
                .key, "The key is not an EC P-256 key, so it cannot make ES256 tokens; use a MusicKit .p8 key.")
        }
        key = loaded
    }

    /// Loads the key from a `.p8` file.
    public convenience init(contentsOfFile path: String) throws(CatalogError) {
        guard let bytes = FileBytes.contents(of: path) else {
            throw CatalogError(.key, "Cannot read the key file '\(path)'; check the path given to --key.")
        }
        try self.init(pem: bytes)
    }

    deinit { openssl.EVP_PKEY_free!(key) }

    /// The ES256 signature of `message` in JWS form: raw `r || s`, 64 bytes.
    public func sign(_ message: [UInt8]) throws(CatalogError) -> [UInt8] {
        guard let context = openssl.EVP_MD_CTX_new!() else { throw CatalogError(.key, "Out of memory while signing.") }
        defer { openssl.EVP_MD_CTX_free!(context) }
        guard openssl.EVP_DigestSignInit!(context, nil, openssl.EVP_sha256!(), nil, key) == 1 else {
            let failure = OpenSSLFailure.take()
            throw CatalogError(.key, "Cannot start signing (\(failure)).", underlying: failure)
        }
        var length = 0
        guard openssl.EVP_DigestSign!(context, nil, &length, message, message.count) == 1, length > 0 else {
            let failure = OpenSSLFailure.take()
            throw CatalogError(.key, "Cannot size the signature (\(failure)).", underlying: failure)
        }
        var der = [UInt8](repeating: 0, count: length)
        guard openssl.EVP_DigestSign!(context, &der, &length, message, message.count) == 1 else {
            let failure = OpenSSLFailure.take()
            throw CatalogError(.key, "Signing failed (\(failure)).", underlying: failure)
        }
        guard let raw = JWT.rawSignature(fromDER: Array(der.prefix(length))) else {
            throw CatalogError(.key, "libcrypto returned a signature that is not ECDSA DER.")
        }
        return raw
    }

    /// A signed developer token for `claims`.
    public func developerToken(_ claims: DeveloperTokenClaims) throws(CatalogError) -> String {
        let input = claims.signingInput
        return JWT.compact(signingInput: input, signature: try sign(Array(input.utf8)))
    }

    private static func curveName(_ key: OpaquePointer) -> String? {
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard openssl.EVP_PKEY_get_group_name!(key, &name, name.count, &length) == 1 else { return nil }
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// libcrypto's functions, loaded by `ES256Key.init` (which every use follows).
var openssl: prcrypto_table { prcrypto_functions().pointee }

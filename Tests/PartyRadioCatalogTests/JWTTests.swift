import COpenSSL
import Foundation
import Testing

@testable import PartyRadioCatalog

/// Test keys made with libcrypto, in the PKCS#8 PEM form Apple's `.p8` files use.
enum TestKeys {
    static func pem(curve: Int32 = NID_X9_62_prime256v1) -> (pem: [UInt8], key: OpaquePointer) {
        let context = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, nil)!
        defer { EVP_PKEY_CTX_free(context) }
        precondition(EVP_PKEY_keygen_init(context) == 1)
        precondition(EVP_PKEY_CTX_set_ec_paramgen_curve_nid(context, curve) == 1)
        var key: OpaquePointer?
        precondition(EVP_PKEY_keygen(context, &key) == 1)
        let bio = BIO_new(BIO_s_mem())!
        defer { BIO_free(bio) }
        precondition(PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1)
        var pem: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = BIO_read(bio, &chunk, Int32(chunk.count))
            if count <= 0 { break }
            pem += chunk.prefix(Int(count))
        }
        return (pem, key!)
    }

    /// Verifies a JWS ES256 signature (raw r||s) over `message` with libcrypto.
    static func verify(_ signature: [UInt8], message: [UInt8], key: OpaquePointer) -> Bool {
        guard let der = JWT.derSignature(fromRaw: signature) else { return false }
        let context = EVP_MD_CTX_new()
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        return EVP_DigestVerify(context, der, der.count, message, message.count) == 1
    }
}

@Suite struct JWTTests {
    @Test func base64URLRoundTrip() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 251) }
            let text = JWT.base64URL(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(JWT.base64URLDecode(text) == bytes)
        }
        #expect(JWT.base64URL(Array("hello?>".utf8)) == "aGVsbG8_Pg")
        #expect(JWT.base64URLDecode("a$b") == nil)
    }

    @Test func derConversionBothWays() {
        let raw = [UInt8](repeating: 0x80, count: 32) + [0, 0, 1] + [UInt8](repeating: 7, count: 29)
        let der = JWT.derSignature(fromRaw: raw)!
        #expect(der[0] == 0x30)
        #expect(JWT.rawSignature(fromDER: der) == raw)
        #expect(JWT.rawSignature(fromDER: [0x30, 0x03, 0x02, 0x01]) == nil)
        #expect(JWT.rawSignature(fromDER: []) == nil)
    }

    @Test func developerTokenVerifiesAndSaysTheRightThings() throws {
        let (pem, publicKey) = TestKeys.pem()
        defer { EVP_PKEY_free(publicKey) }
        let key = try ES256Key(pem: pem)
        let claims = DeveloperTokenClaims(
            teamID: "ABCDE12345", keyID: "KEY1234567", issuedAt: 1_700_000_000, lifetimeSeconds: 180 * 86_400)
        let token = try key.developerToken(claims)
        let parts = token.split(separator: ".").map(String.init)
        #expect(parts.count == 3)

        let header = try JSONSerialization.jsonObject(with: Data(JWT.base64URLDecode(parts[0])!)) as! [String: Any]
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == "KEY1234567")
        let body = try JSONSerialization.jsonObject(with: Data(JWT.base64URLDecode(parts[1])!)) as! [String: Any]
        #expect(body["iss"] as? String == "ABCDE12345")
        #expect(body["iat"] as? Int == 1_700_000_000)
        #expect(body["exp"] as? Int == 1_700_000_000 + 15_552_000)

        let signature = JWT.base64URLDecode(parts[2])!
        #expect(signature.count == 64)
        #expect(TestKeys.verify(signature, message: Array((parts[0] + "." + parts[1]).utf8), key: publicKey))
        #expect(!TestKeys.verify(signature, message: Array((parts[0] + "." + parts[1] + "x").utf8), key: publicKey))
    }

    @Test func headerAndClaimsAreCompactJSONInAFixedOrder() {
        let claims = DeveloperTokenClaims(
            teamID: "ABCDE12345", keyID: "KEY\"\\\n1", issuedAt: 1_700_000_000, lifetimeSeconds: 60)
        #expect(claims.headerJSON == #"{"alg":"ES256","kid":"KEY\"\\\n1","typ":"JWT"}"#)
        #expect(claims.claimsJSON == #"{"iss":"ABCDE12345","iat":1700000000,"exp":1700000060}"#)
    }

    @Test func appleLimitIsSixMonths() {
        #expect(DeveloperTokenClaims.maximumLifetimeDays * 86_400 <= 15_777_000)
        #expect(DeveloperTokenClaims.isAppleIdentifier("ABCDE12345"))
        #expect(!DeveloperTokenClaims.isAppleIdentifier("abcde12345"))
        #expect(!DeveloperTokenClaims.isAppleIdentifier("ABC"))
    }

    @Test func wrongKeysAreRefusedClearly() throws {
        let (p384, other) = TestKeys.pem(curve: NID_secp384r1)
        EVP_PKEY_free(other)
        #expect(throws: CatalogError.self) { try ES256Key(pem: p384) }
        do {
            _ = try ES256Key(pem: Array("not a key".utf8))
            Issue.record("garbage accepted")
        } catch {
            #expect(error.code == .key)
            #expect(error.message.contains(".p8"))
            #expect(error.underlying is OpenSSLFailure)
        }
        do {
            _ = try ES256Key(contentsOfFile: "/nonexistent/AuthKey.p8")
            Issue.record("missing file accepted")
        } catch {
            #expect(error.message.contains("--key"))
        }
    }

    @Test func readsAKeyFile() throws {
        let (pem, publicKey) = TestKeys.pem()
        EVP_PKEY_free(publicKey)
        let path = temporaryDirectory() + "/AuthKey_KEY1234567.p8"
        try Data(pem).write(to: URL(fileURLWithPath: path))
        _ = try ES256Key(contentsOfFile: path)
    }
}

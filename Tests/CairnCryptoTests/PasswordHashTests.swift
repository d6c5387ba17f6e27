import Testing

// scrypt through OpenSSL: the RFC 7914 test vector, the stored record format, and verification.
@testable import CairnCrypto

struct FixedRandom: RandomSource {
    let byte: UInt8
    func bytes(_ count: Int) -> [UInt8] { [UInt8](repeating: byte, count: count) }
}

private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
private func format(_ s: String, _ v: UInt8) -> String { s }
extension String {
    fileprivate init(format: String, _ v: UInt8) {
        let digits = Array("0123456789abcdef")
        self = String([digits[Int(v >> 4)], digits[Int(v & 15)]])
    }
}

@Suite(.timeLimit(.minutes(5)))
struct PasswordHashTests {
    @Test func scryptMatchesRFC7914Vector() {
        // RFC 7914 §12: scrypt(P="password", S="NaCl", N=1024, r=8, p=16, dkLen=64)
        let key = PasswordHash.derive(
            password: "password", salt: Array("NaCl".utf8),
            parameters: ScryptParameters(n: 1024, r: 8, p: 16), length: 64)
        #expect(
            hex(key) == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
                + "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
    }

    @Test func recordVerifiesTheRightPasswordOnly() {
        let params = ScryptParameters(n: 1024, r: 8, p: 1)
        let record = PasswordHash.make(password: "correct horse", parameters: params, random: SecureRandom())
        #expect(record.verify("correct horse"))
        #expect(!record.verify("correct horsE"))
        #expect(!record.verify(""))
    }

    @Test func encodedRecordRoundTripsWithItsParameters() throws {
        let params = ScryptParameters(n: 2048, r: 4, p: 2)
        let record = PasswordHash.make(password: "pässwörd 🔑", parameters: params, random: FixedRandom(byte: 7))
        let text = record.encoded
        #expect(text.hasPrefix("scrypt$2048$4$2$"))
        let parsed = try #require(PasswordHash(encoded: text))
        #expect(parsed == record)
        #expect(parsed.verify("pässwörd 🔑"))
    }

    @Test func saltIsPerRecord() {
        let params = ScryptParameters(n: 1024, r: 8, p: 1)
        let a = PasswordHash.make(password: "same password", parameters: params, random: SecureRandom())
        let b = PasswordHash.make(password: "same password", parameters: params, random: SecureRandom())
        #expect(a.salt != b.salt)
        #expect(a.key != b.key)
    }

    @Test(arguments: [
        "", "scrypt", "bcrypt$1024$8$1$AAAA$AAAA", "scrypt$1000$8$1$AAAA$AAAA", "scrypt$1024$0$1$AAAA$AAAA",
        "scrypt$1024$8$1$$AAAA", "scrypt$1024$8$1$AA*A$AAAA", "scrypt$1024$8$1$AAAA", "scrypt$x$8$1$AAAA$AAAA",
    ])
    func malformedRecordsAreRejected(_ text: String) {
        #expect(PasswordHash(encoded: text) == nil)
    }

    @Test func parameterValidity() {
        #expect(ScryptParameters.standard.isValid)
        #expect(!ScryptParameters(n: 1000, r: 8, p: 1).isValid)
        #expect(!ScryptParameters(n: 1 << 24, r: 8, p: 1).isValid)  // 2 GiB of memory
    }
}

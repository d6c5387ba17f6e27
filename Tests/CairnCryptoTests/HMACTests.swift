// HMAC-SHA-256 against the RFC 4231 test vectors (cases 1, 2, 3, 4, 6 and 7: short, ASCII, repeated-byte and
// longer-than-block keys), plus the empty key and message.
import CairnCrypto
import Testing

@Suite(.timeLimit(.minutes(5)))
struct HMACTests {
    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    private static func bytes(hex: String) -> [UInt8] {
        let chars = Array(hex.utf8)
        return stride(from: 0, to: chars.count, by: 2).map {
            UInt8(String(decoding: chars[$0..<$0 + 2], as: UTF8.self), radix: 16)!
        }
    }

    @Test(arguments: [
        // RFC 4231 §4.2: key 0x0b × 20, "Hi There".
        (
            "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        // §4.3: key "Jefe", "what do ya want for nothing?".
        (
            "4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ),
        // §4.4: key 0xaa × 20, data 0xdd × 50.
        (
            String(repeating: "aa", count: 20), String(repeating: "dd", count: 50),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        ),
        // §4.5: key 0x01...0x19, data 0xcd × 50.
        (
            "0102030405060708090a0b0c0d0e0f10111213141516171819", String(repeating: "cd", count: 50),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
        ),
        // §4.7: key 0xaa × 131 (longer than a block), "Test Using Larger Than Block-Size Key - Hash Key First".
        (
            String(repeating: "aa", count: 131),
            "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65"
                + "204b6579202d2048617368204b6579204669727374",
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),
    ])
    func matchesRFC4231(key: String, data: String, expected: String) {
        #expect(Self.hex(HMAC.sha256(key: Self.bytes(hex: key), message: Self.bytes(hex: data))) == expected)
    }

    @Test func largerThanBlockKeyAndData() {
        // RFC 4231 §4.8.
        let text =
            "This is a test using a larger than block-size key and a larger than block-size data. The key "
            + "needs to be hashed before being used by the HMAC algorithm."
        let data = Array(text.utf8)
        #expect(
            Self.hex(HMAC.sha256(key: [UInt8](repeating: 0xaa, count: 131), message: data))
                == "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
    }

    @Test func emptyKeyAndMessage() {
        #expect(
            Self.hex(HMAC.sha256(key: [], message: []))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test func differentKeysGiveDifferentTags() {
        #expect(HMAC.sha256(key: [1], message: [7]) != HMAC.sha256(key: [2], message: [7]))
    }

    @Test func aPreparedKeyGivesTheSameTagsForEveryKeyAndMessageLength() {
        for keyLength in [0, 1, 32, 64, 65, 131] {
            let key = (0..<keyLength).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
            let prepared = HMAC.PreparedKey(key)
            for messageLength in [0, 1, 55, 64, 300, 4096] {
                let message = (0..<messageLength).map { UInt8(truncatingIfNeeded: $0 &* 7) }
                #expect(prepared.sha256(message) == HMAC.sha256(key: key, message: message), "\(keyLength)")
                #expect(prepared.sha256(message) == HMAC.sha256(key: key, message: message), "reused")
            }
        }
    }
}

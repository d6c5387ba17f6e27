// SHA-256 vectors and constant-time comparison.
import CairnCrypto
import Testing

@Suite(.timeLimit(.minutes(5)))
struct DigestTests {
    @Test func sha256OfABCMatchesFIPSVector() {
        let digits = Array("0123456789abcdef")
        let hex = String(Digest.sha256("abc").flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
        #expect(hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func sha256OfEmptyInput() {
        #expect(Digest.sha256([UInt8]()).prefix(4) == [0xe3, 0xb0, 0xc4, 0x42])
    }

    @Test func constantTimeEqual() {
        #expect(Digest.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!Digest.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!Digest.constantTimeEqual([1, 2, 3], [1, 2]))
        #expect(Digest.constantTimeEqual([], []))
    }

    @Test func secureRandomGivesDistinctBytes() {
        let r = SecureRandom()
        let a = r.bytes(32)
        let b = r.bytes(32)
        #expect(a.count == 32)
        #expect(a != b)
    }
}

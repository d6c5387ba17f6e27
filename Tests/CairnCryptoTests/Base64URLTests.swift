// Base64url without padding: RFC 4648 vectors, the URL-safe alphabet, and rejection of non-canonical input.
import CairnCrypto
import Testing

@Suite(.timeLimit(.minutes(5)))
struct Base64URLTests {
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"),
        ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
    ])
    func rfc4648Vectors(_ plain: String, _ encoded: String) {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test func usesTheURLSafeAlphabet() {
        #expect(Base64URL.encode([0xfb, 0xff, 0xbf]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xfb, 0xff, 0xbf])
    }

    @Test func roundTripsEveryLengthUpTo64() {
        let random = SecureRandom()
        for n in 0...64 {
            let bytes = random.bytes(n)
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }

    @Test(arguments: ["Zg==", "Z", "Zm9v+", "Zm/v", "Zh", "Zm9vYh", "a b"])
    func rejectsPaddingForeignCharactersAndNonCanonicalTails(_ text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}

// The account rules: validation, duplicate names, "Login failed", rate limiting, tokens stored as digests,
// logout revoking.
import CairnCrypto
import CairnErrorCodes
import CairnHubTestSupport
import CairnLoop
import Synchronization
import Testing

@testable import CairnCore
@testable import CairnSessions

@Suite(.timeLimit(.minutes(5)))
struct AccountsTests {
    let store = MemoryAccountStore()
    let clock = ManualClock()
    let random = SeededRandom(seed: 42)

    func makeAccounts(_ rules: AccountRules = AccountRules()) -> Accounts {
        Accounts(store: store, hasher: fastHasher(random), random: random, clock: clock, rules: rules)
    }

    func expectError(
        _ code: DomainError.Code, containing text: String = "",
        _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            Issue.record("expected \(code)")
        } catch let error as DomainError {
            #expect(error.code == code)
            #expect(text.isEmpty || error.message.contains(text), "message '\(error.message)' should contain '\(text)'")
        } catch {
            Issue.record("expected DomainError \(code), got \(error)")
        }
    }

    @Test func registerReturnsUserAndWorkingToken() async throws {
        let accounts = makeAccounts()
        let session = try await accounts.register(username: "alice", password: "correct horse", name: "Alice A")
        #expect(session.user.username == "alice")
        #expect(session.user.name == "Alice A")
        #expect(!session.user.isGuest)
        #expect(session.token.utf8.count == 43)
        let user = try await accounts.authenticate(token: session.token)
        #expect(user == session.user)
    }

    @Test func tokensAreStoredOnlyAsDigests() async throws {
        let accounts = makeAccounts()
        let session = try await accounts.register(username: "bob", password: "password1", name: nil)
        let stored = store.state.withLock { Array($0.tokens.keys) }
        #expect(stored.count == 1)
        #expect(stored[0] == Digest.sha256(Base64URL.decode(session.token)!))
        #expect(stored[0] != Base64URL.decode(session.token)!)
    }

    @Test func displayNameDefaultsToUsername() async throws {
        let session = try await makeAccounts().register(username: "carol", password: "password1", name: nil)
        #expect(session.user.name == "carol")
    }

    @Test(arguments: [
        ("ab", "3–32"), (String(repeating: "a", count: 33), "3–32"), ("Alice", "a-z"),
        ("al ice", "a-z"), ("al-ice", "a-z"), ("élan", "a-z"),
    ])
    func badUsernamesAreRefused(_ username: String, _ text: String) async {
        let accounts = makeAccounts()
        await expectError(.badRequest, containing: "'username'") {
            _ = try await accounts.register(username: username, password: "password1", name: nil)
        }
    }

    @Test func shortPasswordIsRefused() async {
        let accounts = makeAccounts()
        await expectError(.badRequest, containing: "at least 8") {
            _ = try await accounts.register(username: "dave", password: "1234567", name: nil)
        }
    }

    @Test func blankOrControlNamesAreRefused() async {
        let accounts = makeAccounts()
        await expectError(.badRequest, containing: "'name'") {
            _ = try await accounts.register(username: "erin", password: "password1", name: "   ")
        }
        await expectError(.badRequest, containing: "control") {
            _ = try await accounts.register(username: "erin", password: "password1", name: "a\u{7}b")
        }
    }

    @Test func namesAreMeasuredInBytesOfUTF8() async throws {
        let accounts = makeAccounts()
        // 21 euro signs are 63 bytes; 22 are 66, over the 64-byte limit though only 22 characters.
        let fits = try await accounts.register(
            username: "gail", password: "password1",
            name: String(repeating: "€", count: 21))
        #expect(fits.user.name.utf8.count == 63)
        await expectError(.badRequest, containing: "64 bytes") {
            _ = try await accounts.register(
                username: "gus", password: "password1", name: String(repeating: "€", count: 22))
        }
    }

    @Test(arguments: [
        "alice\u{202E}lanigiro", "\u{2067}bob", "eve\u{200E}", "ma\u{200B}llory", "\u{FEFF}trent",
        "a\u{2060}b", "\u{200D}zed", "zed\u{200C}", "z\u{200D}\u{200D}ed",
    ])
    func namesThatHideHowTheyReadAreRefused(_ name: String) async {
        let accounts = makeAccounts()
        await expectError(.badRequest, containing: "'name'") {
            _ = try await accounts.register(username: "ivan", password: "password1", name: name)
        }
    }

    @Test(arguments: ["👨\u{200D}👩\u{200D}👧", "🏳\u{FE0F}\u{200D}🌈", "می\u{200C}خواهم", "Zoë", "李小龙"])
    func joinersBetweenVisibleCharactersAreAllowed(_ name: String) async throws {
        let accounts = makeAccounts()
        let session = try await accounts.register(username: "jane", password: "password1", name: name)
        #expect(session.user.name == name)
    }

    @Test func duplicateUsernameIsTaken() async throws {
        let accounts = makeAccounts()
        _ = try await accounts.register(username: "frank", password: "password1", name: nil)
        await expectError(.usernameTaken, containing: "frank") {
            _ = try await accounts.register(username: "frank", password: "password2", name: nil)
        }
    }

    @Test func loginSucceedsWithRightPasswordAndFailsOtherwise() async throws {
        let accounts = makeAccounts()
        let registered = try await accounts.register(username: "gina", password: "password1", name: nil)
        let session = try await accounts.login(username: "gina", password: "password1", connection: 1)
        #expect(session.user == registered.user)
        #expect(session.token != registered.token)
        await expectError(.invalidCredentials, containing: "Login failed") {
            _ = try await accounts.login(username: "gina", password: "password2", connection: 1)
        }
        await expectError(.invalidCredentials, containing: "Login failed") {
            _ = try await accounts.login(username: "nobody", password: "password1", connection: 1)
        }
    }

    @Test func loginIgnoresUsernameCase() async throws {
        let accounts = makeAccounts()
        _ = try await accounts.register(username: "hank", password: "password1", name: nil)
        let session = try await accounts.login(username: "HANK", password: "password1", connection: 1)
        #expect(session.user.username == "hank")
    }

    @Test func failedLoginsAreRateLimitedPerUsernameUntilTheWindowPasses() async throws {
        var rules = AccountRules()
        rules.failuresPerUsername = 3
        rules.failureWindowMs = 60_000
        let accounts = makeAccounts(rules)
        _ = try await accounts.register(username: "ivan", password: "password1", name: nil)
        for connection in 1...3 as ClosedRange<UInt64> {
            await expectError(.invalidCredentials) {
                _ = try await accounts.login(username: "ivan", password: "wrong-pass", connection: connection)
            }
        }
        // Even the right password is refused while the username is throttled, from any connection.
        await expectError(.rateLimited, containing: "try again") {
            _ = try await accounts.login(username: "ivan", password: "password1", connection: 99)
        }
        clock.advance(by: 60_001)
        let session = try await accounts.login(username: "ivan", password: "password1", connection: 99)
        #expect(session.user.username == "ivan")
    }

    @Test func failedLoginsAreRateLimitedPerConnectionAcrossUsernames() async throws {
        var rules = AccountRules()
        rules.failuresPerConnection = 2
        let accounts = makeAccounts(rules)
        _ = try await accounts.register(username: "judy", password: "password1", name: nil)
        await expectError(.invalidCredentials) {
            _ = try await accounts.login(username: "x1x", password: "password1", connection: 7)
        }
        await expectError(.invalidCredentials) {
            _ = try await accounts.login(username: "x2x", password: "password1", connection: 7)
        }
        await expectError(.rateLimited) {
            _ = try await accounts.login(username: "judy", password: "password1", connection: 7)
        }
        // Another connection is not affected.
        _ = try await accounts.login(username: "judy", password: "password1", connection: 8)
    }

    @Test func guessesFromElsewhereDoNotLockOutASourceThatLoggedInBefore() async throws {
        var rules = AccountRules()
        rules.failuresPerUsername = 3
        rules.failuresPerUsernameFromNewSources = 5
        let accounts = makeAccounts(rules)
        _ = try await accounts.register(username: "kate", password: "password1", name: nil)
        _ = try await accounts.login(username: "kate", password: "password1", connection: 1, source: "10.0.0.1")
        // One attacking address is held after 3 failures, whatever it tries next.
        for n in 1...3 as ClosedRange<UInt64> {
            await expectError(.invalidCredentials) {
                _ = try await accounts.login(
                    username: "kate", password: "guess\(n)xx", connection: 10 + n,
                    source: "203.0.113.9")
            }
        }
        await expectError(.rateLimited) {
            _ = try await accounts.login(username: "kate", password: "password1", connection: 20, source: "203.0.113.9")
        }
        // Spread over many addresses, new sources together are held after 5 failures…
        for n in 1...2 as ClosedRange<UInt64> {
            await expectError(.invalidCredentials) {
                _ = try await accounts.login(
                    username: "kate", password: "guess-\(n)", connection: 30 + n,
                    source: "198.51.100.\(n)")
            }
        }
        await expectError(.rateLimited) {
            _ = try await accounts.login(
                username: "kate", password: "password1", connection: 40, source: "198.51.100.99")
        }
        // …but the owner's own address still logs in with the right password.
        let session = try await accounts.login(
            username: "kate", password: "password1", connection: 41,
            source: "10.0.0.1")
        #expect(session.user.username == "kate")
    }

    @Test func aLoginWithAnImpossibleUsernameIsRefusedBeforeAnythingIsCounted() async throws {
        var rules = AccountRules()
        rules.failuresPerConnection = 2
        let accounts = makeAccounts(rules)
        _ = try await accounts.register(username: "liam", password: "password1", name: nil)
        for name in ["", "no spaces", String(repeating: "z", count: 5000), "ünïcode"] {
            await expectError(.badRequest, containing: "'username'") {
                _ = try await accounts.login(username: name, password: "password1", connection: 5)
            }
        }
        // None of those counted against the connection's two allowed failures.
        _ = try await accounts.login(username: "liam", password: "password1", connection: 5)
    }

    @Test func parallelWrongPasswordsCannotSlipPastTheLimit() async throws {
        let accounts = makeAccounts()
        _ = try await accounts.register(username: "lena", password: "password1", name: nil)
        let codes = await withTaskGroup(of: DomainError.Code?.self) { group in
            for connection in 1...30 as ClosedRange<UInt64> {
                group.addTask {
                    do {
                        _ = try await accounts.login(username: "lena", password: "wrong-pass", connection: connection)
                        return nil
                    } catch { return (error as? DomainError)?.code }
                }
            }
            var all: [DomainError.Code?] = []
            for await code in group { all.append(code) }
            return all
        }
        #expect(codes.filter { $0 == .invalidCredentials }.count == 5)
        #expect(codes.filter { $0 == .rateLimited }.count == 25)
    }

    @Test func successfulLoginsDoNotCountAgainstTheLimit() async throws {
        let accounts = makeAccounts()
        _ = try await accounts.register(username: "mona", password: "password1", name: nil)
        for _ in 0..<8 { _ = try await accounts.login(username: "mona", password: "password1", connection: 1) }
    }

    @Test func guestsGetUniqueUnregistrableNames() async throws {
        let accounts = makeAccounts()
        let a = try await accounts.guest()
        let b = try await accounts.guest()
        #expect(a.user.isGuest && b.user.isGuest)
        #expect(a.user.username.hasPrefix("guest-"))
        #expect(a.user.username != b.user.username)
        await expectError(.badRequest) {
            _ = try await accounts.register(username: a.user.username, password: "password1", name: nil)
        }
        #expect(try await accounts.authenticate(token: a.token) == a.user)
    }

    @Test func logoutRevokesTheToken() async throws {
        let accounts = makeAccounts()
        let session = try await accounts.register(username: "kate", password: "password1", name: nil)
        try await accounts.logout(token: session.token)
        await expectError(.unauthorized) { _ = try await accounts.authenticate(token: session.token) }
        try await accounts.logout(token: session.token)  // idempotent
    }

    @Test(arguments: ["", "short", String(repeating: "A", count: 43) + "=", String(repeating: "*", count: 43)])
    func malformedTokensAreUnauthorized(_ token: String) async {
        let accounts = makeAccounts()
        await expectError(.unauthorized) { _ = try await accounts.authenticate(token: token) }
    }
}

// PicShare's accounts in the account rules: an optional email at registration, checked and stored lower-cased,
// unique (a taken one is `username_taken`), login by email as by username; and a suspension refusing login (once
// the password is right) and token authentication with `suspended`, until it is lifted or runs out.
import CairnErrorCodes
import CairnHubTestSupport
import CairnLoop
import Synchronization
import Testing

@testable import CairnCore
@testable import CairnSessions

@Suite(.timeLimit(.minutes(5)))
struct AccountEmailTests {
    let store = MemoryAccountStore()
    let clock = ManualClock()
    let random = SeededRandom(seed: 42)

    func makeAccounts() -> Accounts {
        Accounts(store: store, hasher: fastHasher(random), random: random, clock: clock)
    }

    func code(_ body: () async throws -> Void) async -> DomainError.Code? {
        do {
            try await body()
            return nil
        } catch let error as DomainError {
            return error.code
        } catch {
            return .internal
        }
    }

    @Test func theEmailIsStoredLowerCasedAndLoginTakesIt() async throws {
        let accounts = makeAccounts()
        let session = try await accounts.register(
            username: "alice", password: "password1", name: nil, email: "Alice@Example.ORG")
        #expect(store.state.withLock { $0.emails[session.user.id] } == "alice@example.org")
        let again = try await accounts.login(username: "ALICE@example.org", password: "password1", connection: 1)
        #expect(again.user == session.user)
        #expect(
            await code { _ = try await accounts.login(username: "alice@example.org", password: "wrong", connection: 1) }
                == .invalidCredentials)
        #expect(
            await code {
                _ = try await accounts.login(username: "bob@example.org", password: "password1", connection: 1)
            }
                == .invalidCredentials)
    }

    @Test func aTakenEmailIsUsernameTakenWhateverItsCase() async throws {
        let accounts = makeAccounts()
        _ = try await accounts.register(username: "alice", password: "password1", name: nil, email: "a@example.org")
        #expect(
            await code {
                _ = try await accounts.register(
                    username: "bob", password: "password1", name: nil, email: "A@EXAMPLE.org")
            } == .usernameTaken)
        #expect(store.state.withLock { $0.users.count } == 1)
        // Without an email, any number of accounts.
        _ = try await accounts.register(username: "carol", password: "password1", name: nil)
        _ = try await accounts.register(username: "dave", password: "password1", name: nil)
    }

    @Test(arguments: [
        "", "plain", "@example.org", "a@", "a@b", "a@@example.org", "a b@example.org", "a@exa mple.org",
        "a@-example.org", "a@example..org", ".a@example.org", "a\"b@example.org", "a@exämple.org",
        String(repeating: "x", count: 65) + "@example.org", "a@" + String(repeating: "x", count: 250) + ".org",
    ])
    func malformedEmailsAreBadRequests(_ email: String) async throws {
        let accounts = makeAccounts()
        #expect(
            await code {
                _ = try await accounts.register(username: "alice", password: "password1", name: nil, email: email)
            } == .badRequest)
        #expect(store.state.withLock { $0.users.isEmpty })
    }

    @Test(arguments: ["a@example.org", "first.last+tag@mail.example.co.uk", "x_y-z@a-b.io"])
    func wellFormedEmailsAreAccepted(_ email: String) throws {
        #expect(try makeAccounts().normalizedEmail(email) == email)
    }

    @Test func aSuspendedAccountCannotLogInOrAuthenticateUntilItRunsOut() async throws {
        let accounts = makeAccounts()
        let session = try await accounts.register(username: "alice", password: "password1", name: nil)
        let until = clock.now() + 60_000
        store.state.withLock {
            $0.suspensions[session.user.id] = Suspension(reason: "spam", since: clock.now(), until: until)
        }
        do {
            _ = try await accounts.login(username: "alice", password: "password1", connection: 1)
            Issue.record("login should be refused")
        } catch {
            #expect(error.code == .suspended)
            #expect(error.message.contains("spam"))
            #expect(error.details.contains(.init("until", until)))
        }
        #expect(await code { _ = try await accounts.authenticate(token: session.token) } == .suspended)
        // A wrong password still reads as a failed login: the refusal reveals the suspension to the owner only.
        #expect(
            await code { _ = try await accounts.login(username: "alice", password: "nope", connection: 1) }
                == .invalidCredentials)
        clock.advance(by: 60_000)
        #expect(try await accounts.authenticate(token: session.token) == session.user)
        _ = try await accounts.login(username: "alice", password: "password1", connection: 1)
    }

    @Test func aSuspensionUntilLiftedSaysSo() throws {
        let error = Suspension(reason: "abuse", since: 0, until: nil).refusal
        #expect(error.code == .suspended)
        #expect(error.message == "Account suspended until lifted: abuse")
        #expect(
            Suspension(reason: "x", since: 0, until: 1_700_000_000_000).refusal.message
                == "Account suspended until 2023-11-14T22:13:20Z: x")
    }
}
